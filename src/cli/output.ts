// How the CLI shows things to people: problems, tables, key/value blocks, times. Pure: strings in, strings out.
import type { ProblemBody, ProblemFieldError } from '../core/problems.ts';

/**
 * `title: detail`, then one line per error with its position: `svc.yml:3:5: message` or `/pointer: message`. A detail
 * that only repeats the errors (the API's validation problems) is left out.
 */
export function formatProblem(problem: ProblemBody, file = 'svc.yml'): string {
  const head = problem.detail && !detailRepeatsErrors(problem) ? `${problem.title}: ${problem.detail}` : problem.title;
  const lines = [head, ...(problem.errors ?? []).map((error) => `  ${errorPosition(error, file)}: ${error.message}`)];
  return `${lines.join('\n')}\n`;
}

/** The API's validation detail, `/pointer message; ...`: nothing the errors do not say. */
export function detailRepeatsErrors(problem: ProblemBody): boolean {
  return !!problem.errors?.length && problem.detail === problem.errors.map((e) => `${e.pointer} ${e.message}`).join('; ');
}

function errorPosition(error: ProblemFieldError, file: string): string {
  if (error.line !== undefined) return `${file}:${error.line}:${error.column ?? 1}${error.code ? `: ${error.code}` : ''}`;
  const where = error.in && error.in !== 'body' ? `${error.in} ` : '';
  return `${where}${error.pointer || '/'}`;
}

/** Columns padded to the widest cell; the last column is left ragged. */
export function table(headers: string[], rows: Array<Array<string | number | undefined>>): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === undefined ? '' : String(cell))))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  return cells
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd())
    .join('\n')
    .concat('\n');
}

/** `key: value` lines with the keys aligned; undefined values are left out. */
export function fields(entries: Array<[string, string | number | boolean | undefined | null]>): string {
  const shown = entries.filter(([, value]) => value !== undefined && value !== null && value !== '');
  const width = Math.max(...shown.map(([key]) => key.length)) + 1;
  return shown.map(([key, value]) => `${`${key}:`.padEnd(width)} ${value}`).join('\n').concat('\n');
}

/** A time for people: local date and time to the second. */
export function when(iso: string | undefined | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * The time of a log line for people: local `HH:MM:SS.mmm`, with the local date in front when it is not the day of
 * `now` (a log kept from earlier days stays unambiguous; today's lines stay short).
 */
export function logTime(iso: string, now: Date = new Date()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const day = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  return day(date) === day(now) ? time : `${day(date)} ${time}`;
}

/** Seconds between two times, e.g. `1.2s`, `3m04s`. */
export function duration(fromIso: string | null | undefined, toIso: string | null | undefined): string {
  if (!fromIso || !toIso) return '';
  const ms = Math.max(0, new Date(toIso).getTime() - new Date(fromIso).getTime());
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

/** A JSON Pointer below `base` as a path for people: `/services/web/ports/0/port` -> `ports[0].port`. */
export function pointerPath(pointer: string, base = ''): string {
  const rest = pointer.startsWith(base) ? pointer.slice(base.length) : pointer;
  const segments = rest.split('/').filter((s) => s !== '').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return segments.reduce((path, segment) => {
    if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
    const plain = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment) ? segment : JSON.stringify(segment);
    return path === '' ? plain : `${path}.${plain}`;
  }, '');
}

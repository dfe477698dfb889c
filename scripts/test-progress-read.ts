// Reads what scripts/test-progress.mjs wrote: the tests still running, and each file's wall time.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Progress {
  /** Tests dequeued and not yet passed or failed, the innermost last: [file, name, ms running]. */
  running: { file: string; name: string; ms: number }[];
  /** Each file's time: the sum of its top-level tests' durations, longest first. */
  files: { file: string; ms: number }[];
}

export function readProgress(progressFile: string, nowMs: number): Progress {
  let text = '';
  try {
    text = readFileSync(progressFile, 'utf8');
  } catch {
    return { running: [], files: [] };
  }
  const open = new Map<string, number>();
  const spans = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [at, kind, file, nesting, name, duration] = line.split('\t');
    if (name === undefined) continue;
    if (nesting === '0' && name === file) continue; // the file itself: dequeued, and it never passes
    const key = `${file}\t${nesting}\t${name}`;
    if (kind === 'dequeue') open.set(key, Number(at));
    else open.delete(key);
    if (kind !== 'dequeue' && nesting === '0') spans.set(file, (spans.get(file) ?? 0) + (Number(duration) || 0));
  }
  const running = [...open]
    .map(([key, start]) => ({ file: short(key.split('\t')[0]), name: key.split('\t').slice(2).join(' '), ms: nowMs - start }));
  const files = [...spans].map(([file, ms]) => ({ file: short(file), ms }))
    .sort((a, b) => b.ms - a.ms);
  return { running, files };
}

const short = (file: string) => path.relative(process.cwd(), file) || file;

export const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

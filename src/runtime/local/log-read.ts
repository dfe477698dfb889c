// Reading a replica's or a stage step's log (log-file.ts) for the driver's callers: the lines after `since`, at most
// `limit`, and how many lines the size bound dropped before the first one returned. A replica's files are written
// inside its pod by the workspace UID, so they are opened without following links, as regular files only, and
// read in bounded pieces.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { LOG_FILE, LOG_MAX_BYTES, parseLogLine, PREVIOUS_LOG_FILE, type LogLine } from '../../agent/log-file.ts';
import type { LogRead } from '../driver.ts';

/** At most this much of a file is read (its end); more than the writer keeps, so only a tampered file is cut. */
const READ_LIMIT = LOG_MAX_BYTES * 2;

/** The end of a file as text ('' when it is missing, a link or not a regular file). */
export async function readFileEnd(file: string, limit = READ_LIMIT): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return '';
  try {
    const info = await handle.stat();
    if (!info.isFile()) return '';
    const length = Math.min(info.size, limit);
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, info.size - length);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    return info.size > length ? text.slice(text.indexOf('\n') + 1) : text; // without the line cut at the start
  } finally {
    await handle.close();
  }
}

/** Every line of the log in `dir` still kept (the previous file, then the current one), in seq order. */
export async function readLogLines(dir: string): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  for (const name of [PREVIOUS_LOG_FILE, LOG_FILE]) {
    for (const text of (await readFileEnd(path.join(dir, name))).split('\n')) {
      const line = parseLogLine(text);
      if (line && (lines.length === 0 || line.seq > lines.at(-1)!.seq)) lines.push(line);
    }
  }
  return lines;
}

/** The lines after `since` (default 0: from the start), at most `limit`. */
export function selectLogLines(lines: LogLine[], options: { since?: number; limit?: number } = {}): LogRead {
  const since = Math.max(0, options.since ?? 0);
  const after = lines.filter((line) => line.seq > since);
  const chosen = options.limit === undefined ? after : after.slice(0, Math.max(0, options.limit));
  const first = lines[0]?.seq;
  return { lines: chosen, dropped: first === undefined ? 0 : Math.max(0, first - 1 - since) };
}

/** Lines of text (the sandbox's own output) as `system` lines numbered on from `lines`. */
export function appendSystemLines(lines: LogLine[], text: string, at: string): LogLine[] {
  let seq = lines.at(-1)?.seq ?? 0;
  const extra = text
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.length > 0)
    .map((line): LogLine => ({ seq: (seq += 1), at, stream: 'system', text: line }));
  return [...lines, ...extra];
}

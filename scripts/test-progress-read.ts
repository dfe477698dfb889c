// Reads what scripts/test-progress.mjs wrote: the tests still running, and each file's wall time.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Progress {
  /** Tests dequeued and not yet passed or failed, the innermost last: [file, name, ms running]. */
  running: { file: string; name: string; ms: number }[];
  /** Each file's wall time, from its dequeue to its last event, longest first. */
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
  const spans = new Map<string, { start: number; last: number }>();
  for (const line of text.split('\n')) {
    const [at, kind, file, nesting, name] = line.split('\t');
    if (name === undefined) continue;
    const ms = Number(at);
    if (nesting === '0' && name === file) {
      spans.set(file, { start: ms, last: ms }); // the file itself: its dequeue starts it, and it never passes
      continue;
    }
    const key = `${file}\t${nesting}\t${name}`;
    const span = spans.get(file) ?? { start: ms, last: ms };
    span.last = ms;
    spans.set(file, span);
    if (kind === 'dequeue') open.set(key, ms);
    else open.delete(key);
  }
  const running = [...open]
    .map(([key, start]) => ({ file: short(key.split('\t')[0]), name: key.split('\t').slice(2).join(' '), ms: nowMs - start }));
  const files = [...spans].map(([file, span]) => ({ file: short(file), ms: span.last - span.start }))
    .sort((a, b) => b.ms - a.ms);
  return { running, files };
}

const short = (file: string) => path.relative(process.cwd(), file) || file;

export const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

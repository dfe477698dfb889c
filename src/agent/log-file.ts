// Logs of a service replica (written by its agent inside the pod) and of a stage step (written by the server): JSON
// lines `{seq, at, stream, text}` in a directory, bounded in size. When the file would pass `maxBytes` it becomes
// the previous file (replacing the one before) and a new file begins, so at most about twice the bound is kept.
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

export const LOG_FILE = 'log.jsonl';
export const PREVIOUS_LOG_FILE = 'log.1.jsonl';
export const LOG_MAX_BYTES = 512 * 1024;
/** Longer lines are cut, so that one line never takes the whole bound. */
export const LOG_MAX_LINE_CHARS = 8192;

export type LogStream = 'stdout' | 'stderr' | 'system';

export interface LogLine {
  /** 1 for the first line of a run, then one more per line. */
  seq: number;
  at: string;
  stream: LogStream;
  text: string;
}

export interface LogWriter {
  write(stream: LogStream, text: string): void;
  close(): void;
}

export interface LogWriterOptions {
  maxBytes?: number;
  now?: () => Date;
}

/** Starts a fresh log in `dir` (an earlier run's files are removed). */
export function createLogWriter(dir: string, options: LogWriterOptions = {}): LogWriter {
  const maxBytes = options.maxBytes ?? LOG_MAX_BYTES;
  const now = options.now ?? (() => new Date());
  const current = path.join(dir, LOG_FILE);
  const previous = path.join(dir, PREVIOUS_LOG_FILE);
  rmSync(previous, { force: true });
  let fd: number | undefined = openSync(current, 'w', 0o600);
  let bytes = 0;
  let seq = 0;
  return {
    write(stream, text) {
      if (fd === undefined) return;
      seq += 1;
      const cut = text.length > LOG_MAX_LINE_CHARS ? `${text.slice(0, LOG_MAX_LINE_CHARS)} [line cut]` : text;
      const line = Buffer.from(`${JSON.stringify({ seq, at: now().toISOString(), stream, text: cut })}\n`);
      if (bytes > 0 && bytes + line.length > maxBytes) {
        closeSync(fd);
        renameSync(current, previous);
        fd = openSync(current, 'w', 0o600);
        bytes = 0;
      }
      writeSync(fd, line);
      bytes += line.length;
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/**
 * The same JSON lines on standard output (a pod whose container log Kubernetes keeps and bounds): a replica on the
 * Kubernetes driver. `write` hands each line to `out` (process.stdout by default).
 */
export function createStdoutLogWriter(options: { now?: () => Date; out?: (line: string) => void } = {}): LogWriter {
  const now = options.now ?? (() => new Date());
  const out = options.out ?? ((line: string) => process.stdout.write(line));
  let seq = 0;
  let open = true;
  return {
    write(stream, text) {
      if (!open) return;
      seq += 1;
      const cut = text.length > LOG_MAX_LINE_CHARS ? `${text.slice(0, LOG_MAX_LINE_CHARS)} [line cut]` : text;
      out(`${JSON.stringify({ seq, at: now().toISOString(), stream, text: cut })}\n`);
    },
    close() {
      open = false;
    },
  };
}

/** One line of a log file, or undefined for anything else (a line cut short by a crash, or not ours). */
export function parseLogLine(line: string): LogLine | undefined {
  try {
    const parsed = JSON.parse(line) as Partial<LogLine>;
    const valid =
      Number.isSafeInteger(parsed.seq) &&
      typeof parsed.at === 'string' &&
      typeof parsed.text === 'string' &&
      ['stdout', 'stderr', 'system'].includes(parsed.stream as string);
    return valid ? { seq: parsed.seq!, at: parsed.at!, stream: parsed.stream!, text: parsed.text! } : undefined;
  } catch {
    return undefined;
  }
}

/** Splits a stream's chunks into lines; `flush` hands on what is left without a newline. */
export function lineSplitter(emit: (line: string) => void): { push(chunk: string): void; flush(): void } {
  let partial = '';
  return {
    push(chunk) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) emit(line.endsWith('\r') ? line.slice(0, -1) : line);
      if (partial.length > LOG_MAX_LINE_CHARS) {
        // output without newlines must not grow without bound: hand it on in pieces
        emit(partial);
        partial = '';
      }
    },
    flush() {
      if (partial) emit(partial);
      partial = '';
    },
  };
}

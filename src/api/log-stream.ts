// Log reads of the API (service replicas, stage steps): a page of lines as JSON, or with `follow` a stream of JSON
// lines (application/x-ndjson) that goes on as lines come, until the client leaves or the source ends.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LogRead } from '../runtime/driver.ts';

export const LogQuery = Type.Object({
  since: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'only lines after this seq (the last one seen)' })),
  tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: 'only the last N lines' })),
  follow: Type.Optional(Type.Boolean({ description: 'stream lines as JSON lines (application/x-ndjson) as they come' })),
});

export const LogLineSchema = Type.Object({
  seq: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr'), Type.Literal('system')]),
  text: Type.String(),
});

export const LogPageSchema = Type.Object({
  lines: Type.Array(LogLineSchema),
  dropped: Type.Integer({ description: 'lines dropped by the size bound before the first one' }),
  next_since: Type.Integer({ description: 'pass as `since` to read on' }),
});

/** A page of lines as JSON; with `follow`, one LogLine per line of the stream. */
export const LogResponses = {
  200: {
    description: 'A page of lines, or with `follow` a stream of JSON lines (the content schema is that of one line)',
    content: { 'application/json': { schema: LogPageSchema }, 'application/x-ndjson': { schema: LogLineSchema } },
  },
};

export interface LogSource {
  read(since: number | undefined): Promise<LogRead>;
  /** Whether no more lines will come (a finished step); a replica's log never ends while followed. */
  ended?(): Promise<boolean>;
}

interface LogQueryValues {
  since?: number;
  tail?: number;
  follow?: boolean;
}

const FOLLOW_POLL_MS = 250;

export async function logPage(source: LogSource, query: LogQueryValues) {
  const read = await source.read(query.since);
  const lines = query.tail !== undefined ? read.lines.slice(-query.tail) : read.lines;
  const dropped = read.dropped + (read.lines.length - lines.length);
  return { lines, dropped, next_since: read.lines.at(-1)?.seq ?? query.since ?? 0 };
}

/**
 * Answers the page, or with `follow` streams JSON lines until the client goes or the source has ended. `guard`
 * registers the follow with the stream guard (src/api/stream-rights.ts) and answers its release: a caller who loses
 * the right has the stream ended.
 */
export async function answerLogs(request: FastifyRequest, reply: FastifyReply, source: LogSource, guard?: (end: () => void) => () => void) {
  const query = request.query as LogQueryValues;
  const first = await logPage(source, query);
  if (!query.follow) return first;
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  let open = true;
  raw.on('close', () => (open = false));
  const release = guard?.(() => (open = false));
  let since = first.next_since;
  const write = (lines: typeof first.lines) => open && lines.forEach((line) => raw.write(`${JSON.stringify(line)}\n`));
  write(first.lines);
  while (open) {
    const ended = (await source.ended?.()) ?? false;
    const next = await source.read(since).catch(() => ({ lines: [], dropped: 0 }));
    write(next.lines);
    since = next.lines.at(-1)?.seq ?? since;
    if (ended && next.lines.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
  }
  release?.();
  raw.end();
}

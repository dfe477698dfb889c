// Reading streamed answers line by line: JSON lines of logs (application/x-ndjson) and the event stream's
// text/event-stream (through eventsource-parser).
import type { LogLine } from '../../sdk/src/index.ts';
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';

/** A streamed answer (the transport's HttpAnswer, or fetch's Response). */
type Streamed = { body: ReadableStream<Uint8Array<ArrayBuffer>> | null };

/** Each line of a streamed body as it arrives (without its newline). */
export async function* textLines(response: Streamed): AsyncGenerator<string> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n')) >= 0) {
      yield buffer.slice(0, end).replace(/\r$/, '');
      buffer = buffer.slice(end + 1);
    }
  }
  buffer += decoder.decode();
  if (buffer) yield buffer;
}

export async function* logLines(response: Streamed): AsyncGenerator<LogLine> {
  for await (const line of textLines(response)) if (line.trim()) yield JSON.parse(line) as LogLine;
}

/** A log line for people: the program's output as it is, the platform's own lines marked. */
export const formatLogLine = (line: LogLine, indent = '') => `${indent}${line.stream === 'system' ? '[svc] ' : ''}${line.text}\n`;

export interface ServerSentEvent {
  id?: string;
  event: string;
  data: string;
}

/** Events of a text/event-stream, read by eventsource-parser (comments and retry lines are not events). */
export async function* serverSentEvents(response: Streamed): AsyncGenerator<ServerSentEvent> {
  if (!response.body) return;
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of events as unknown as AsyncIterable<EventSourceMessage>) {
    yield { id: message.id, event: message.event ?? 'message', data: message.data };
  }
}

// Reading streamed answers line by line: JSON lines of logs (application/x-ndjson) and the event stream's
// text/event-stream.

export interface LogLine {
  seq: number;
  at: string;
  stream: 'stdout' | 'stderr' | 'system';
  text: string;
}

/** Each line of a streamed body as it arrives (without its newline). */
export async function* textLines(response: Response): AsyncGenerator<string> {
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

export async function* logLines(response: Response): AsyncGenerator<LogLine> {
  for await (const line of textLines(response)) if (line.trim()) yield JSON.parse(line) as LogLine;
}

/** A log line for people: the program's output as it is, the platform's own lines marked. */
export const formatLogLine = (line: LogLine, indent = '') => `${indent}${line.stream === 'system' ? '[svc] ' : ''}${line.text}\n`;

export interface ServerSentEvent {
  id?: string;
  event: string;
  data: string;
}

/** Events of a text/event-stream: `id:`, `event:`, `data:` lines up to a blank line; comments are skipped. */
export async function* serverSentEvents(response: Response): AsyncGenerator<ServerSentEvent> {
  let current: Partial<ServerSentEvent> & { data?: string } = {};
  for await (const line of textLines(response)) {
    if (line === '') {
      if (current.data !== undefined) yield { id: current.id, event: current.event ?? 'message', data: current.data };
      current = {};
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') current.data = current.data === undefined ? value : `${current.data}\n${value}`;
    else if (field === 'event') current.event = value;
    else if (field === 'id') current.id = value;
  }
}

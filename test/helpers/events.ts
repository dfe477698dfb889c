// A client of GET /api/v1/events for tests: reads the text/event-stream (eventsource-parser) and lets a test wait
// for an event with a deadline. Events arrive in commit order, so "X did not arrive" is shown by waiting for a later event Y.
import { createParser } from 'eventsource-parser';
import type { Answer, ApiClient } from './client.ts';

export interface StreamEvent {
  id: string;
  event: string;
  data: any;
}

function headersOf(client: ApiClient): Record<string, string> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (client.auth.token) headers.authorization = `Bearer ${client.auth.token}`;
  if (client.auth.cookie) headers.cookie = `__Host-svc_session=${client.auth.cookie}`;
  return headers;
}

export class EventStream {
  /** Every event received, in order. */
  readonly received: StreamEvent[] = [];
  /** Comment lines (`: ping` arrives as `ping`). */
  readonly comments: string[] = [];
  /** Resolves when the server ends or drops the stream. */
  readonly ended: Promise<void>;
  private consumed = 0;
  private done = false;
  private wake?: () => void;

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    body: ReadableStream<Uint8Array>,
    private readonly abort: AbortController,
  ) {
    this.ended = this.read(body);
  }

  /** Opens the stream; `query` like `?team=3`. Rejects unless the server answers 200 (use `answer` for errors). */
  static async open(client: ApiClient, query = ''): Promise<EventStream> {
    const abort = new AbortController();
    const response = await fetch(`${client.baseUrl}/api/v1/events${query}`, { headers: headersOf(client), signal: abort.signal });
    if (response.status !== 200) {
      throw new Error(`GET /events${query} answered ${response.status}: ${await response.text()}`);
    }
    return new EventStream(response.status, response.headers, response.body!, abort);
  }

  /** The answer to GET /events as an ApiClient Answer: the problem for errors; for 200 the stream is closed at once. */
  static async answer(client: ApiClient, query = ''): Promise<Answer> {
    const abort = new AbortController();
    const response = await fetch(`${client.baseUrl}/api/v1/events${query}`, { headers: headersOf(client), signal: abort.signal });
    if (response.status === 200) {
      abort.abort();
      return { status: 200, headers: response.headers, body: undefined, text: '' };
    }
    const text = await response.text();
    const body = /json/.test(response.headers.get('content-type') ?? '') && text ? JSON.parse(text) : text;
    return { status: response.status, headers: response.headers, body, text };
  }

  /**
   * Waits for the next event of `type` (and `match`) after those already consumed; answers every event from the
   * last one consumed up to and including it, so a test can assert what came in between.
   */
  async until(type: string, match: (data: any) => boolean = () => true, timeoutMs = 5000): Promise<StreamEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex((e, i) => i >= this.consumed && e.event === type && match(e.data));
      if (index >= 0) {
        const passed = this.received.slice(this.consumed, index + 1);
        this.consumed = index + 1;
        return passed;
      }
      if (this.done) throw new Error(`stream ended before ${type}; received ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} within ${timeoutMs} ms; received ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The next event of `type` (see `until`). */
  async next(type: string, match?: (data: any) => boolean, timeoutMs?: number): Promise<StreamEvent> {
    return (await this.until(type, match, timeoutMs)).at(-1)!;
  }

  close(): void {
    this.abort.abort();
  }

  private describe(): string {
    return JSON.stringify(this.received.slice(this.consumed).map((e) => [e.event, e.data]));
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (message) => {
        if (message.event !== undefined) this.received.push({ id: message.id!, event: message.event, data: JSON.parse(message.data) });
        this.wake?.();
      },
      onComment: (comment) => this.comments.push(comment.trim()),
    });
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by close() or cut by the server
    } finally {
      this.done = true;
      this.wake?.();
    }
  }
}

// The event stream GET /api/v1/events (spec 6) as typed events. The stream is opened again after it breaks (a
// growing pause, reset by each `ready`); every `ready`, the first and each after a reconnect, is passed on, because
// events of the gap are lost (no replay) and the reader must re-read what it shows.
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { conventionHeaders, problemFetch, type SvcOptions } from './client.ts';
import { problemOfAnswer, SvcProblem } from './problems.ts';
import type { SvcEvent } from './resources.ts';

export interface EventStreamOptions {
  /** Only the events of this team (`ready` always comes). */
  team?: number;
  /** Ends the stream (the iteration then simply finishes). */
  signal?: AbortSignal;
  /** The pause before opening the stream again after `failures` breaks in a row (default 1 s doubling to 30 s). */
  retryDelay?: (failures: number) => number;
  /** Breaks in a row after which the last error is thrown (default: never give up). */
  maxFailures?: number;
  /** Told when the stream broke and is opened again after `delayMs`. */
  onReconnect?: (info: { failures: number; delayMs: number; error: unknown }) => void;
}

const defaultRetryDelay = (failures: number) => Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1));

/** Refusals that another try cannot change: the caller's (4xx, except timeouts and rate limits) or 501. */
function isFinal(error: unknown): boolean {
  if (!(error instanceof SvcProblem)) return false;
  return (error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429) || error.status === 501;
}

/** Opens the stream once: its events until it ends; a refusal is thrown as its problem. */
async function* openOnce(options: SvcOptions, stream: EventStreamOptions): AsyncGenerator<SvcEvent> {
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/api/v1/events`, globalThis.location?.href);
  if (stream.team !== undefined) url.searchParams.set('team', String(stream.team));
  const headers = { ...conventionHeaders(options, 'GET'), accept: 'text/event-stream' };
  const response = await problemFetch(options)(new Request(url, { headers, signal: stream.signal }));
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text is the detail
    }
    throw problemOfAnswer(response.status, response.statusText, body);
  }
  const messages = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of messages as unknown as AsyncIterable<EventSourceMessage>) {
    yield JSON.parse(message.data) as SvcEvent;
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The events the caller may see, across reconnects, until `signal` aborts (or a refusal that no retry changes). */
export async function* svcEvents(options: SvcOptions, stream: EventStreamOptions = {}): AsyncGenerator<SvcEvent> {
  const retryDelay = stream.retryDelay ?? defaultRetryDelay;
  let failures = 0;
  while (!stream.signal?.aborted) {
    let error: unknown = new Error('the event stream ended');
    try {
      for await (const event of openOnce(options, stream)) {
        if (event.type === 'ready') failures = 0;
        yield event;
      }
    } catch (caught) {
      if (stream.signal?.aborted) return;
      if (isFinal(caught)) throw caught;
      error = caught;
    }
    if (stream.signal?.aborted) return;
    failures += 1;
    if (stream.maxFailures !== undefined && failures >= stream.maxFailures) throw error;
    const delayMs = retryDelay(failures);
    stream.onReconnect?.({ failures, delayMs, error });
    await pause(delayMs, stream.signal);
  }
}

// The text/event-stream wire format of spec 6 and a writer that never buffers more than its cap for a client that
// stopped reading: past the cap the connection is dropped (the client reconnects, gets `ready` and re-reads).

export const PING_FRAME = ': ping\n\n';

/** `data` is the event as JSON text; JSON never holds a raw line break, so it fits one `data:` line. */
export function eventFrame(id: number, type: string, data: string): string {
  return `id: ${id}\nevent: ${type}\ndata: ${data}\n\n`;
}

/** `ready` has id 0: it is no event of the store and there is no replay to resume from. */
export function readyFrame(at: Date): string {
  return eventFrame(0, 'ready', JSON.stringify({ type: 'ready', at: at.toISOString() }));
}

const CRLF = Buffer.from('\r\n');

/**
 * Frames as they are sent: their bytes, encoded once and shared by every stream that sends them (the fan-out writes
 * one event to a thousand streams). `frames` is how many frames the text holds (a batch of events is one text).
 */
export class SseText {
  readonly bytes: Buffer;
  private chunk?: Buffer;

  constructor(
    readonly text: string,
    readonly frames = 1,
  ) {
    this.bytes = Buffer.from(text);
  }

  /** The bytes as one HTTP/1.1 chunk (size line, bytes, line break): what a chunked response puts on the socket. */
  get chunked(): Buffer {
    return (this.chunk ??= Buffer.concat([Buffer.from(`${this.bytes.length.toString(16)}\r\n`), this.bytes, CRLF]));
  }
}

/** The ping as sent, one text for every stream. */
export const PING_TEXT = new SseText(PING_FRAME);

/** What the writer needs of a connection (src/api/routes/event-sink.ts for a response, a fake in tests). */
export interface SseSink {
  /** Sends the text; false when the sink's own buffer is full: wait for 'drain' before writing more. */
  write(text: SseText): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): unknown;
  destroy(): unknown;
}

export interface SseLimits {
  /** Bytes held for a client that is not reading, beyond what the socket itself buffers. */
  maxQueuedBytes: number;
  /** Frames held likewise (pings and events). */
  maxQueuedFrames: number;
}

export const defaultSseLimits: SseLimits = { maxQueuedBytes: 1024 * 1024, maxQueuedFrames: 1000 };

export class SseWriter {
  private queue: SseText[] = [];
  private queuedBytes = 0;
  private queuedFrames = 0;
  private waitingForDrain = false;
  private closed = false;

  constructor(
    private readonly sink: SseSink,
    private readonly limits: SseLimits,
    /** Called once when the writer drops the connection for being over its cap. */
    private readonly onDropped: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** Bytes queued in the writer (not counting the sink's own buffer). */
  get queued(): { bytes: number; frames: number } {
    return { bytes: this.queuedBytes, frames: this.queuedFrames };
  }

  /** Sends a text now, queues it while the client is behind, or drops the client when over the cap. */
  send(text: SseText): void {
    if (this.closed) return;
    if (!this.waitingForDrain) {
      if (!this.sink.write(text)) this.awaitDrain();
      return;
    }
    const bytes = text.bytes.length;
    if (this.queuedFrames + text.frames > this.limits.maxQueuedFrames || this.queuedBytes + bytes > this.limits.maxQueuedBytes) {
      this.drop();
      return;
    }
    this.queue.push(text);
    this.queuedFrames += text.frames;
    this.queuedBytes += bytes;
  }

  /** Ends the stream: at once when the client keeps up, by dropping it when it is behind (it might never read). */
  close(): void {
    if (this.closed) return;
    if (this.waitingForDrain) {
      this.drop();
      return;
    }
    this.closed = true;
    this.sink.end();
  }

  private awaitDrain(): void {
    this.waitingForDrain = true;
    this.sink.once('drain', () => this.flush());
  }

  private flush(): void {
    this.waitingForDrain = false;
    if (this.closed || this.queue.length === 0) return;
    const text = this.queue.length === 1 ? this.queue[0] : new SseText(this.queue.map((t) => t.text).join(''), this.queuedFrames);
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedFrames = 0;
    if (!this.sink.write(text)) this.awaitDrain();
  }

  private drop(): void {
    this.closed = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedFrames = 0;
    this.sink.destroy();
    this.onDropped();
  }
}

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

/** What the writer needs of an HTTP response (a Node ServerResponse in the server, a fake in tests). */
export interface SseSink {
  /** False when the sink's own buffer is full: wait for 'drain' before writing more. */
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): unknown;
  destroy(): unknown;
  /**
   * Optional: hold writes until `uncork` (a Node ServerResponse has both). A chunked response otherwise sends the
   * chunk's size line, the frame and its line break as separate socket writes, packets with setNoDelay.
   */
  cork?(): void;
  uncork?(): void;
}

export interface SseLimits {
  /** Bytes held for a client that is not reading, beyond what the socket itself buffers. */
  maxQueuedBytes: number;
  /** Frames held likewise (pings and events). */
  maxQueuedFrames: number;
}

export const defaultSseLimits: SseLimits = { maxQueuedBytes: 1024 * 1024, maxQueuedFrames: 1000 };

export class SseWriter {
  private queue: string[] = [];
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

  /**
   * Sends a frame now, queues it while the client is behind, or drops the client when over the cap. `frames` is
   * how many frames the text holds (the fan-out sends a batch of events to a client as one text).
   */
  send(frame: string, frames = 1): void {
    if (this.closed) return;
    if (!this.waitingForDrain) {
      if (!this.write(frame)) this.awaitDrain();
      return;
    }
    const bytes = Buffer.byteLength(frame);
    if (this.queuedFrames + frames > this.limits.maxQueuedFrames || this.queuedBytes + bytes > this.limits.maxQueuedBytes) {
      this.drop();
      return;
    }
    this.queue.push(frame);
    this.queuedFrames += frames;
    this.queuedBytes += bytes;
  }

  /** One socket write per text (see SseSink.cork). */
  private write(text: string): boolean {
    this.sink.cork?.();
    const more = this.sink.write(text);
    this.sink.uncork?.();
    return more;
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
    const chunk = this.queue.join('');
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedFrames = 0;
    if (!this.write(chunk)) this.awaitDrain();
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

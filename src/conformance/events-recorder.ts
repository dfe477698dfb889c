// Keeps every event of an open stream (spec 6) while the other rules act, so that rules can ask whether an action
// was followed by the event the spec ties to it.
import type { ServerSentEvent } from '../cli/streams.ts';

export interface RecordedEvent {
  id?: string;
  /** The `event:` line. */
  name: string;
  /** The `data:` line parsed (undefined when it is not JSON). */
  data: any;
  raw: string;
}

export class EventRecorder {
  readonly events: RecordedEvent[] = [];
  private readonly waiters = new Set<() => void>();
  ended = false;

  constructor(
    stream: AsyncGenerator<ServerSentEvent>,
    readonly close: () => void,
  ) {
    void this.read(stream);
  }

  private async read(stream: AsyncGenerator<ServerSentEvent>): Promise<void> {
    try {
      for await (const message of stream) {
        let data: unknown;
        try {
          data = JSON.parse(message.data);
        } catch {
          data = undefined;
        }
        this.events.push({ id: message.id, name: message.event, data, raw: message.data });
        this.waiters.forEach((wake) => wake());
      }
    } catch {
      // a broken stream ends the recording; rules waiting on it fail with what they waited for
    }
    this.ended = true;
    this.waiters.forEach((wake) => wake());
  }

  /** The first event matching `match`, waiting for it up to `timeoutMs`; undefined when none came. */
  waitFor(match: (event: RecordedEvent) => boolean, timeoutMs: number): Promise<RecordedEvent | undefined> {
    return new Promise((resolve) => {
      const done = (event: RecordedEvent | undefined) => {
        clearTimeout(timer);
        this.waiters.delete(look);
        resolve(event);
      };
      const look = () => {
        const found = this.events.find(match);
        if (found || this.ended) done(found);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.waiters.add(look);
      look();
    });
  }
}

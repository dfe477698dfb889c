// The one reader of svc_events on a server, shared by the event fan-out (GET /events) and the router's workspace
// cache. A notification carries its event when it fits (src/store/events.ts); for a larger one it carries the row's
// id and the feed reads the row, once for every consumer. Notifications that arrive together (one read from the
// socket) form one batch; batches reach the consumers in notification order, rows read or not.
import type { EventRow } from '../store/events.ts';
import { decodeNotification, EVENTS_CHANNEL } from '../store/events.ts';
import type { Subscriber } from './hub.ts';

/** What the feed needs of the NotificationHub. */
export interface NotificationSource {
  readonly isLive: boolean;
  subscribe(channel: string, subscriber: Subscriber): () => void;
  whenListening(channel: string): Promise<void>;
}

export interface EventConsumer {
  /** A batch of events in notification (commit) order; `received` is when its first notification arrived. */
  events(rows: readonly EventRow[], received: number): void;
  /** The notification connection was lost or is back (see Subscriber.reset): events may have been missed. */
  reset(): void;
  /** The rows of a batch could not be read: its events are lost. */
  failed(error: Error): void;
}

/** Monotonic milliseconds (the same clock in every process of a machine: bench/events compares them). */
export const monotonicMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export class EventFeed {
  private readonly consumers = new Set<EventConsumer>();
  /** Carried events, and ids of rows to read, in notification order. */
  private pending: Array<EventRow | number> = [];
  private pendingSince = 0;
  private pumping = false;
  private idleWaiters: Array<() => void> = [];
  private unsubscribe?: () => void;
  /** Rows read because their event was too large to carry (tests and the bench show the fallback with it). */
  rowsRead = 0;

  constructor(
    private readonly options: {
      hub: NotificationSource;
      findEvents: (ids: readonly number[]) => Promise<EventRow[]>;
      log: (message: string) => void;
    },
  ) {}

  get isLive(): boolean {
    return this.options.hub.isLive;
  }

  async start(): Promise<void> {
    this.unsubscribe = this.options.hub.subscribe(EVENTS_CHANNEL, {
      notify: (payload) => this.notified(payload),
      reset: () => {
        for (const consumer of this.consumers) consumer.reset();
      },
    });
    await this.options.hub.whenListening(EVENTS_CHANNEL);
  }

  subscribe(consumer: EventConsumer): () => void {
    this.consumers.add(consumer);
    return () => this.consumers.delete(consumer);
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Resolves when every notification so far has been passed on. */
  settled(): Promise<void> {
    if (!this.pumping && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notified(payload: string): void {
    const event = decodeNotification(payload);
    if (event === undefined) {
      this.options.log(`events: ignored notification "${payload.slice(0, 40)}"`);
      return;
    }
    if (this.pending.length === 0) this.pendingSince = monotonicMs();
    this.pending.push(event);
    if (this.pumping) return;
    this.pumping = true;
    // setImmediate: notifications that arrived in the same read from the socket are taken as one batch.
    setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0);
        const received = this.pendingSince;
        const ids = batch.filter((entry): entry is number => typeof entry === 'number');
        let rows = batch as EventRow[];
        if (ids.length > 0) {
          try {
            rows = await this.withRows(batch, ids);
          } catch (error) {
            for (const consumer of this.consumers) consumer.failed(error as Error);
            continue;
          }
        }
        if (rows.length === 0) continue;
        for (const consumer of this.consumers) {
          try {
            consumer.events(rows, received);
          } catch (error) {
            this.options.log(`events: a consumer failed: ${(error as Error).message}`);
          }
        }
      }
    } finally {
      this.pumping = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** The batch with the rows of `ids` read in one query, in notification order (rows swept meanwhile left out). */
  private async withRows(batch: Array<EventRow | number>, ids: number[]): Promise<EventRow[]> {
    const found = new Map((await this.options.findEvents(ids)).map((row) => [row.id, row]));
    this.rowsRead += found.size;
    return batch.flatMap((entry) => (typeof entry === 'number' ? (found.get(entry) ?? []) : [entry]));
  }
}

// One LISTEN connection per server, fanned out to subscribers in-process.
// After a lost connection it reconnects and tells every subscriber to `reset` (no replay: re-read state).
import pg from 'pg';

export interface Subscriber {
  notify(payload: string): void;
  /** The subscription was (re)established; anything missed while it was down is lost. */
  reset(): void;
}

export class NotificationHub {
  private client?: pg.Client;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private live = false;
  /** LISTEN statements sent for channels subscribed while connected, until they are answered. */
  private readonly listening = new Map<string, Promise<void>>();
  /** The connection's statements run one after another (pg refuses overlapping queries on one client). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly url: string,
    private readonly log: (message: string) => void,
  ) {}

  /** True while notifications are arriving; caches must not be trusted otherwise. */
  get isLive(): boolean {
    return this.live;
  }

  async start(): Promise<void> {
    await this.connect();
  }

  subscribe(channel: string, subscriber: Subscriber): () => void {
    let set = this.subscribers.get(channel);
    if (!set) {
      set = new Set();
      this.subscribers.set(channel, set);
      if (this.live && this.client) {
        const client = this.client;
        const done = this.inTurn(() => client.query(`LISTEN ${channel}`)).then(
          () => undefined,
          (error: Error) => this.lost(error),
        );
        this.listening.set(channel, done);
        done.finally(() => this.listening.delete(channel));
      }
    }
    set.add(subscriber);
    return () => set!.delete(subscriber);
  }

  /**
   * Resolves once notifications of `channel` arrive (or the attempt ended: check isLive). A subscriber that needs
   * to know when it is live should rather rely on `reset()`, which every (re)connection calls.
   */
  async whenListening(channel: string): Promise<void> {
    await this.listening.get(channel);
  }

  private inTurn<T>(statement: () => Promise<T>): Promise<T> {
    const result = this.queue.then(statement, statement);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('notification', (message) => {
      for (const subscriber of this.subscribers.get(message.channel) ?? []) subscriber.notify(message.payload ?? '');
    });
    // Only the connection in use is lost: one of an attempt that failed may end later, after a newer one is live.
    client.on('error', (error) => this.client === client && this.lost(error));
    client.on('end', () => this.client === client && this.lost(new Error('connection ended')));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.live = true;
    for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.reset();
  }

  private lost(error: Error): void {
    if (!this.live || this.closed) return;
    this.live = false;
    this.log(`notification connection lost: ${error.message}; reconnecting`);
    this.client?.end().catch(() => undefined);
    this.client = undefined;
    for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.reset();
    this.scheduleReconnect(200);
  }

  private scheduleReconnect(delayMs: number): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.connect().catch((error: Error) => {
        this.log(`notification reconnect failed: ${error.message}`);
        this.scheduleReconnect(Math.min(delayMs * 2, 5000));
      });
    }, delayMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    clearTimeout(this.retryTimer);
    await this.client?.end().catch(() => undefined);
  }
}

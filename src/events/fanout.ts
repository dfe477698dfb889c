// One fan-out per server: it takes the events of svc_events from the server's event feed (src/events/feed.ts: the
// event carried in the notification, or its row read once) and writes each frame, encoded once, to every subscriber
// allowed to see it. Work runs strictly in order (a standing refreshed by an access.changed applies to every
// later event), so a member removed from a team does not get the team's next event.
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import { findEvents, loadStandings, orgMembersAmong, type EventRow, type StandingRow } from '../store/events.ts';
import { monotonicMs, type EventConsumer, type NotificationSource } from './feed.ts';
import { defaultSseLimits, eventFrame, PING_TEXT, readyFrame, SseText, SseWriter, type SseLimits, type SseSink } from './sse.ts';
import { matchesTeamFilter, maySee, nobody, standingsToRefresh, type Standing } from './visibility.ts';

/** Spec 8: a comment line every 25 seconds. */
export const PING_INTERVAL_MS = 25_000;

export interface EventStore {
  findEvents(ids: readonly number[]): Promise<EventRow[]>;
  loadStandings(userIds: readonly number[]): Promise<StandingRow[]>;
  orgMembersAmong(orgIds: readonly string[], userIds: readonly number[]): Promise<number[]>;
}

/** What the fan-out needs of the EventFeed. */
export interface EventSource {
  subscribe(consumer: EventConsumer): () => void;
  /** Resolves when every notification so far has been passed on. */
  settled(): Promise<void>;
}

export interface FanoutOptions {
  /** Standings (findEvents is the feed's). */
  store: Pick<EventStore, 'loadStandings' | 'orgMembersAmong'>;
  /** For svc_auth and whether notifications arrive. */
  hub: NotificationSource;
  feed: EventSource;
  clock: Clock;
  log: (message: string) => void;
  pingMs?: number;
  limits?: SseLimits;
  /** Told of each delivered batch (SVC_EVENTS_TRACE, read by bench/events). */
  trace?: (batch: DeliveryTrace) => void;
}

/** One batch: monotonic milliseconds (process.hrtime) of its first notification and of its last write. */
export interface DeliveryTrace {
  received: number;
  written: number;
  writes: number;
}

export function poolEventStore(pool: pg.Pool): EventStore {
  return {
    findEvents: (ids) => findEvents(pool, ids),
    loadStandings: (userIds) => loadStandings(pool, userIds),
    orgMembersAmong: (orgIds, userIds) => orgMembersAmong(pool, orgIds, userIds),
  };
}

/** A user's standing, shared by all their streams on this server. */
interface Viewer {
  standing: Standing;
  streams: number;
}

/** Who opened a stream and what they asked for. */
export interface StreamRequest {
  userId: number;
  /** The `team` filter. */
  team?: number;
  /** The API key the stream was opened with: deleting or regenerating it ends the stream. */
  keyId?: string;
  /** The browser session (hex of its hash) the stream was opened with: signing out ends the stream. */
  sessionHash?: string;
}

/** Announced on svc_auth by every change of an API key (src/store/api-keys.ts). */
const AUTH_CHANNEL = 'svc_auth';

/** One open GET /events. */
export class EventSubscription {
  viewer?: Viewer;
  closed = false;
  readonly writer: SseWriter;
  readonly userId: number;
  readonly team: number | undefined;
  readonly keyId: string | undefined;
  readonly sessionHash: string | undefined;

  constructor(
    request: StreamRequest,
    sink: SseSink,
    limits: SseLimits,
    onDropped: (subscription: EventSubscription) => void,
  ) {
    this.userId = request.userId;
    this.team = request.team;
    this.keyId = request.keyId;
    this.sessionHash = request.sessionHash;
    this.writer = new SseWriter(sink, limits, () => onDropped(this));
  }
}

export class EventFanout {
  private readonly subscriptions = new Set<EventSubscription>();
  private readonly viewers = new Map<number, Viewer>();
  private pendingRows: EventRow[] = [];
  private pendingSince = 0;
  private joining: EventSubscription[] = [];
  private resyncRequested = false;
  private pumping = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  private pingTimer?: NodeJS.Timeout;
  private unsubscribe: Array<() => void> = [];
  private readonly limits: SseLimits;

  constructor(private readonly options: FanoutOptions) {
    this.limits = options.limits ?? defaultSseLimits;
  }

  /** Subscribes to the feed (and svc_auth, for deleted keys) and resolves once notifications arrive. */
  async start(): Promise<void> {
    this.unsubscribe.push(this.options.feed.subscribe({
      events: (rows, received) => this.received(rows, received),
      reset: () => {
        // The hub calls reset when the connection is lost (not live) and again once it listens anew (live).
        if (!this.options.hub.isLive) return;
        this.resyncRequested = true;
        this.schedule();
      },
      // Without the rows nobody can be told what changed: end every stream; clients reconnect and re-read.
      failed: (error) => this.failed('cannot read events', error, [...this.subscriptions]),
    }));
    this.unsubscribe.push(this.options.hub.subscribe(AUTH_CHANNEL, {
      notify: (payload) => {
        if (payload.startsWith('key:')) this.keyChanged(payload.slice(4));
        if (payload.startsWith('session:')) this.sessionEnded(payload.slice(8));
      },
      reset: () => undefined,
    }));
    await this.options.hub.whenListening(AUTH_CHANNEL);
    const pingMs = this.options.pingMs ?? PING_INTERVAL_MS;
    this.pingTimer = setInterval(() => this.ping(), pingMs).unref();
  }

  /** Number of open streams (admitted or waiting for their `ready`). */
  get size(): number {
    return this.subscriptions.size + this.joining.length;
  }

  /**
   * Opens a stream for a user (narrowed to `team` when given; the caller checked they may see it). `ready` goes
   * out once the subscription is live and the user's standing is read.
   */
  open(request: StreamRequest, sink: SseSink): EventSubscription {
    const subscription = new EventSubscription(request, sink, this.limits, (s) => this.close(s));
    if (this.stopped) {
      subscription.writer.close();
      subscription.closed = true;
      return subscription;
    }
    this.joining.push(subscription);
    this.schedule();
    return subscription;
  }

  /** Forgets a stream (its connection closed, or it was dropped) and ends it if still open. */
  close(subscription: EventSubscription): void {
    if (subscription.closed) return;
    subscription.closed = true;
    subscription.writer.close();
    if (this.subscriptions.delete(subscription) && subscription.viewer) {
      subscription.viewer.streams--;
      if (subscription.viewer.streams === 0) this.viewers.delete(subscription.userId);
    }
    this.joining = this.joining.filter((s) => s !== subscription);
  }

  /** Ends every stream (server shutdown: open streams would hold the HTTP server's close). */
  closeAll(): void {
    for (const subscription of [...this.joining, ...this.subscriptions]) this.close(subscription);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pingTimer);
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.closeAll();
    await this.settled();
  }

  /** Resolves when nothing is left to do, in the feed or here (tests wait for deliveries with it). */
  async settled(): Promise<void> {
    await this.options.feed.settled();
    if (!this.pumping && !this.hasWork()) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** A batch from the feed: delivered at once when nothing is ahead of it (the feed batched it already). */
  private received(rows: readonly EventRow[], received: number): void {
    if (this.pendingRows.length === 0) this.pendingSince = received;
    this.pendingRows.push(...rows);
    this.schedule(true);
  }

  /** A deleted or regenerated key stops working at once (spec 5.7), also for the streams it opened. */
  private keyChanged(keyId: string): void {
    for (const subscription of [...this.joining, ...this.subscriptions]) {
      if (subscription.keyId === keyId) this.close(subscription);
    }
  }

  /** Signing out ends the streams the session opened. */
  private sessionEnded(sessionHash: string): void {
    for (const subscription of [...this.joining, ...this.subscriptions]) {
      if (subscription.sessionHash === sessionHash) this.close(subscription);
    }
  }

  private ping(): void {
    for (const subscription of this.subscriptions) subscription.writer.send(PING_TEXT);
  }

  private hasWork(): boolean {
    const live = this.options.hub.isLive;
    return this.pendingRows.length > 0 || (live && (this.resyncRequested || this.joining.length > 0));
  }

  /** `now`: start at once rather than after the current turn of the event loop (which gathers streams opened together). */
  private schedule(now = false): void {
    if (this.pumping) return;
    this.pumping = true;
    if (now) void this.pump();
    else setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    try {
      while (this.hasWork()) {
        if (this.resyncRequested && this.options.hub.isLive) {
          this.resyncRequested = false;
          await this.resync();
        } else if (this.joining.length > 0 && this.options.hub.isLive) {
          await this.admit(this.joining.splice(0));
        } else {
          await this.deliver(this.pendingRows.splice(0), this.pendingSince);
        }
      }
    } catch (error) {
      this.failed('fan-out failed', error, [...this.joining, ...this.subscriptions]);
    } finally {
      this.pumping = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** After a reconnection: anything missed is lost, so read every standing again and tell every stream `ready`. */
  private async resync(): Promise<void> {
    try {
      await this.refresh([...this.viewers.keys()]);
    } catch (error) {
      this.failed('cannot read standings after reconnecting', error, [...this.subscriptions]);
      return;
    }
    const frame = new SseText(readyFrame(this.options.clock.now()));
    for (const subscription of this.subscriptions) subscription.writer.send(frame);
  }

  private async admit(joining: EventSubscription[]): Promise<void> {
    const unknown = [...new Set(joining.map((s) => s.userId))].filter((id) => !this.viewers.has(id));
    try {
      if (unknown.length > 0) await this.refresh(unknown);
    } catch (error) {
      this.failed('cannot read standings', error, joining);
      return;
    }
    const frame = new SseText(readyFrame(this.options.clock.now()));
    for (const subscription of joining) {
      if (subscription.closed) continue;
      let viewer = this.viewers.get(subscription.userId);
      if (!viewer) {
        viewer = { standing: nobody(subscription.userId), streams: 0 };
        this.viewers.set(subscription.userId, viewer);
      }
      viewer.streams++;
      subscription.viewer = viewer;
      this.subscriptions.add(subscription);
      subscription.writer.send(frame);
    }
    // Users whose every stream closed while their standing was read.
    for (const id of unknown) if (this.viewers.get(id)?.streams === 0) this.viewers.delete(id);
  }

  /** Refreshes the standings the batch changes (its access.changed, new teams), then writes it. */
  private async deliver(rows: EventRow[], received: number): Promise<void> {
    try {
      const { users, orgs } = standingsToRefresh(rows);
      if (users.size > 0 || orgs.size > 0) {
        const subscribed = [...this.viewers.keys()];
        const stale = subscribed.filter((id) => users.has(id));
        if (orgs.size > 0 && subscribed.length > 0) stale.push(...(await this.options.store.orgMembersAmong([...orgs], subscribed)));
        if (stale.length > 0) await this.refresh([...new Set(stale)]);
      }
    } catch (error) {
      // Without the standings nobody can be told safely: end every stream; clients reconnect and re-read.
      this.failed('cannot read standings', error, [...this.subscriptions]);
      return;
    }
    const writes = this.send(rows);
    this.options.trace?.({ received, written: monotonicMs(), writes });
  }

  /**
   * Writes a batch to every stream in one write each. Each event is encoded once; whether a user may see it is
   * decided once per user (not per stream); streams that see the same events share one text (one Buffer).
   */
  private send(rows: readonly EventRow[]): number {
    if (rows.length === 0 || this.subscriptions.size === 0) return 0;
    const frames = rows.map((row) => eventFrame(row.id, row.type, row.data));
    /** Per user: the indexes of the rows they may see. */
    const visible = new Map<Viewer, number[]>();
    /** Texts by the rows they hold ("0,2"). */
    const texts = new Map<string, SseText>();
    let writes = 0;
    for (const subscription of this.subscriptions) {
      const viewer = subscription.viewer!;
      let seen = visible.get(viewer);
      if (!seen) {
        seen = [];
        for (let i = 0; i < rows.length; i++) if (maySee(viewer.standing, rows[i])) seen.push(i);
        visible.set(viewer, seen);
      }
      const shown = subscription.team === undefined ? seen : seen.filter((i) => matchesTeamFilter(subscription.team, rows[i]));
      if (shown.length === 0) continue;
      const key = shown.length === 1 ? String(shown[0]) : shown.join(',');
      let text = texts.get(key);
      if (!text) {
        text = new SseText(shown.length === 1 ? frames[shown[0]] : shown.map((i) => frames[i]).join(''), shown.length);
        texts.set(key, text);
      }
      subscription.writer.send(text);
      writes++;
    }
    return writes;
  }

  /** Reads the standings of `userIds` into the viewers that exist or are about to (unknown users see nothing). */
  private async refresh(userIds: number[]): Promise<void> {
    if (userIds.length === 0) return;
    const rows = await this.options.store.loadStandings(userIds);
    const found = new Map(rows.map((row) => [row.user_id, row]));
    for (const userId of userIds) {
      const row = found.get(userId);
      const standing: Standing = row
        ? { userId, isAdmin: row.is_admin, teams: new Set(row.team_ids), orgs: new Set(row.org_ids) }
        : nobody(userId);
      const viewer = this.viewers.get(userId);
      if (viewer) viewer.standing = standing;
      else this.viewers.set(userId, { standing, streams: 0 });
    }
  }

  private failed(what: string, error: unknown, affected: EventSubscription[]): void {
    this.options.log(`events: ${what}: ${(error as Error).message}; closing ${affected.length} stream(s)`);
    for (const subscription of affected) this.close(subscription);
  }
}

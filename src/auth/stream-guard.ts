// Long-lived streams (shells, forwarded ports, log follows, the event stream, the editor's WebSocket through the
// router) were admitted once, at their start. Spec 5.7 wants a deleted key to stop working at once, and a member who
// loses a role must lose what it gave: every open stream is registered here with who opened it and what it needs,
// and each change that may take the right away (svc_auth: a key, a session, a user; an event of the feed: roles,
// memberships, teams, the workspace) has the streams it concerns check again. Those that lost the right are closed
// with the reason. A safety net re-checks every stream now and then, and all of them after a lost notification.
import type { EventRow } from '../store/events.ts';
import type { EventConsumer } from '../events/feed.ts';

/** Why a stream was closed: 401 its credentials no longer work, 403 they no longer grant what it needs. */
export interface Revocation {
  status: 401 | 403;
  reason: string;
}

/** The WebSocket close code of a revocation (4000 + the HTTP status, as the clients read it). */
export const revocationCloseCode = (revocation: Revocation): number => 4000 + revocation.status;

/** Who opened a stream and on what it depends. */
export interface StreamHolder {
  userId: number;
  /** The API key it was opened with. */
  keyId?: string;
  /** The console session (hex of its hash) it was opened with. */
  sessionHash?: string;
  /** The team whose roles decide the right, the workspace it reaches (either may be absent). */
  teamId?: number;
  workspaceId?: number;
}

export interface GuardedStream extends StreamHolder {
  /** Checks the right again from the store: undefined when it is still held, else why not. */
  recheck(): Promise<Revocation | undefined>;
  /** Closes the stream for the reason given (called once). */
  revoke(revocation: Revocation): void;
}

/** What changed: an svc_auth payload (`key:<id>`, `session:<hash>`, `user:<id>`, anything else), or an event. */
export type Trigger = { auth: string } | { event: Pick<EventRow, 'type' | 'team_id' | 'org_id' | 'workspace_id' | 'user_id'> };

/** Events that may change what a user may do. */
const ACCESS_EVENTS = new Set(['access.changed', 'members.updated', 'team.deleted', 'org.deleted', 'workspace.updated', 'workspace.deleted']);

/**
 * Whether `trigger` may have taken `holder`'s right away. Pure. An access.changed names its user (every change of a
 * member's roles sends one); a team's deletion or change of members names the team; an organization's deletion may
 * concern any of its teams, which a holder does not record, so every holder of a team checks again; a workspace's
 * change (restricted, deletion) names the workspace.
 */
export function concerns(holder: StreamHolder, trigger: Trigger): boolean {
  if ('auth' in trigger) {
    const payload = trigger.auth;
    if (payload.startsWith('key:')) return holder.keyId === payload.slice(4);
    if (payload.startsWith('session:')) return holder.sessionHash === payload.slice(8);
    if (payload.startsWith('user:')) return holder.userId === Number(payload.slice(5));
    return true;
  }
  const event = trigger.event;
  if (!ACCESS_EVENTS.has(event.type)) return false;
  if (event.type === 'access.changed') return event.user_id === holder.userId;
  if (event.type === 'workspace.updated' || event.type === 'workspace.deleted') return event.workspace_id !== null && event.workspace_id === holder.workspaceId;
  if (event.type === 'org.deleted') return holder.teamId !== undefined;
  return event.team_id !== null && event.team_id === holder.teamId;
}

/** What the guard listens to. */
export interface StreamGuardSources {
  /** Every svc_auth invalidation, after the key cache forgot it (CredentialResolver.onInvalidate). */
  onInvalidate(listener: (payload: string) => Promise<void>): void;
  /** The server's event feed. */
  feed: { subscribe(consumer: EventConsumer): () => void };
  /** Whether notifications arrive (the feed's reset says when this changes). */
  readonly isLive: boolean;
  log: (message: string) => void;
  /** The safety net's period. */
  sweepMs?: number;
}

/** Every stream is checked again at least this often, under the notifications (a lost one, a failed check). */
const SWEEP_MS = 60_000;

interface Entry {
  stream: GuardedStream;
  checking: boolean;
  /** A trigger came while a check ran: check once more after it (it may not have seen the change). */
  again: boolean;
  closed: boolean;
}

export class StreamGuard {
  private readonly entries = new Set<Entry>();
  private readonly unsubscribe: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly sources: StreamGuardSources) {
    sources.onInvalidate(async (payload) => this.triggered({ auth: payload }));
    this.unsubscribe = sources.feed.subscribe({
      events: (rows) => {
        for (const event of rows) this.triggered({ event });
      },
      // Lost or back: anything may have been missed; check everything once notifications arrive again.
      reset: () => {
        if (sources.isLive) this.recheckAll();
      },
      failed: () => this.recheckAll(),
    });
    this.timer = setInterval(() => this.recheckAll(), sources.sweepMs ?? SWEEP_MS).unref();
  }

  /** Open streams. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Registers an open stream; the answer forgets it (call it when the stream closes on its own). `checkNow` for a
   * stream whose admission was long ago (a shell waits for its workspace to wake): a change meanwhile was not seen.
   */
  open(stream: GuardedStream, checkNow = false): () => void {
    const entry: Entry = { stream, checking: false, again: false, closed: false };
    this.entries.add(entry);
    if (checkNow) this.check(entry);
    return () => {
      entry.closed = true;
      this.entries.delete(entry);
    };
  }

  close(): void {
    clearInterval(this.timer);
    this.unsubscribe();
  }

  private triggered(trigger: Trigger): void {
    for (const entry of this.entries) if (concerns(entry.stream, trigger)) this.check(entry);
  }

  private recheckAll(): void {
    for (const entry of this.entries) this.check(entry);
  }

  private check(entry: Entry): void {
    if (entry.checking) {
      entry.again = true;
      return;
    }
    entry.checking = true;
    entry.again = false;
    entry.stream
      .recheck()
      .then(
        (revocation) => {
          if (!revocation || entry.closed) return;
          entry.closed = true;
          this.entries.delete(entry);
          entry.stream.revoke(revocation);
        },
        // The store did not answer: the stream stays, and the next trigger or sweep checks it again.
        (error: Error) => this.sources.log(`streams: could not check a stream of user ${entry.stream.userId} again: ${error.message}`),
      )
      .finally(() => {
        entry.checking = false;
        if (entry.again && !entry.closed) this.check(entry);
      });
  }
}

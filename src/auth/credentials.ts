// Who is calling: an API key (Authorization or Svc-Authorization: Bearer) or the browser session cookie.
// Key lookups are cached in memory; every change to a key or user is announced with NOTIFY svc_auth and
// drops the cached entry on every server, so a deleted key stops working at once.
import { parseCookie } from 'cookie';
import type pg from 'pg';
import { HOUR, type Clock } from '../core/clock.ts';
import { digestsEqual, sha256 } from '../core/secrets.ts';
import type { NotificationHub } from '../events/hub.ts';
import { findApiKey, markApiKeyUsed } from '../store/api-keys.ts';
import { findSession, touchSession } from '../store/sessions.ts';
import { findUserById, type UserRow } from '../store/users.ts';
import { parseApiKeyToken } from './api-key-tokens.ts';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from './sessions.ts';

export const SESSION_COOKIE = '__Host-svc_session';

/** What a request knows of its caller without another query (cached with the key, dropped on any change). */
export interface CallerUser {
  id: number;
  email: string;
  name: string;
  isAdmin: boolean;
  hasPassword: boolean;
  createdAt: Date;
}

export type Principal =
  | { via: 'key'; user: CallerUser; keyId: string }
  | { via: 'session'; user: CallerUser; sessionHash: Buffer };

export type Credentials =
  | { kind: 'none' }
  | { kind: 'key'; token: string }
  | { kind: 'session'; token: string }
  | { kind: 'malformed' };

interface CachedKey {
  secretHash: Buffer;
  /** Epoch milliseconds. */
  expiresAt: number | null;
  lastUsedAt: number | null;
  user: CallerUser;
  /** The caller as requests see it, made once per entry (every request with the key shares it; nothing mutates it). */
  principal: Principal;
  cachedAt: number;
}

const CACHE_TTL_MS = 5 * 60_000;
/** Servers confirm an invalidation on this channel (`<slot> <payload>`) once their caches have forgotten it. */
const ACK_CHANNEL = 'svc_auth_ack';
/** How long a deletion waits for the other servers' confirmations before answering anyway (docs/topology.md). */
export const ACK_WAIT_MS = 2000;

/** The servers of the installation (src/cluster/presence.ts), for confirmations from every one of them. */
export interface ServerCluster {
  slot: number;
  liveSlots(): Promise<number[]>;
}
const SESSION_TOUCH_MS = 60_000;

export function callerUser(row: UserRow): CallerUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    isAdmin: row.is_admin,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
  };
}

function bearer(value: string | undefined): string | undefined | null {
  if (value === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match ? match[1] : null;
}

/**
 * The cookie `name` of a Cookie header (the `cookie` package reads it: the first of a repeated name, quotes and
 * percent-encoding removed; a value that is not valid percent-encoding is kept as it is and matches no session).
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  return header ? parseCookie(header)[name] : undefined;
}

/** A header's (first) value. A module function, not a closure per call: every API request passes here. */
function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Svc-Authorization wins over Authorization; a key wins over the cookie. */
export function readCredentials(headers: Record<string, string | string[] | undefined>): Credentials {
  const token = bearer(firstOf(headers['svc-authorization'])) ?? bearer(firstOf(headers.authorization));
  if (token === null) return { kind: 'malformed' };
  if (token !== undefined) return { kind: 'key', token };
  const session = readCookie(firstOf(headers.cookie), SESSION_COOKIE);
  return session ? { kind: 'session', token: session } : { kind: 'none' };
}

export class CredentialResolver {
  private readonly keys = new Map<string, CachedKey>();
  /** Moves on every invalidation, so a lookup that raced with one is not cached. */
  private generation = 0;
  /** Caches elsewhere that admit by credentials (the nginx data plane's admissions). */
  private readonly listeners: Array<(payload: string) => Promise<void>> = [];

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly hub: NotificationHub,
    private readonly log: (message: string) => void,
    private readonly cluster?: ServerCluster,
  ) {
    hub.subscribe('svc_auth', {
      notify: (payload) => void this.invalidate(payload).then(() => this.confirm(payload)),
      reset: () => this.invalidateAll(),
    });
    hub.subscribe(ACK_CHANNEL, { notify: (message) => this.confirmed(message), reset: () => undefined });
  }

  /** Confirmations received: payload -> slot -> when (epoch ms); kept for a minute. */
  private readonly confirmations = new Map<string, Map<number, number>>();
  private readonly confirmationWaiters = new Set<() => void>();

  private confirm(payload: string): void {
    if (!this.cluster || payload.startsWith('session:')) return;
    this.pool.query('SELECT pg_notify($1, $2)', [ACK_CHANNEL, `${this.cluster.slot} ${payload}`]).catch((error: Error) => this.log(`svc_auth confirmation: ${error.message}`));
  }

  private confirmed(message: string): void {
    const space = message.indexOf(' ');
    const slot = Number(message.slice(0, space));
    const payload = message.slice(space + 1);
    const now = Date.now();
    for (const [key, slots] of this.confirmations) for (const [s, at] of slots) if (now - at > 60_000 && slots.delete(s) && slots.size === 0) this.confirmations.delete(key);
    const slots = this.confirmations.get(payload) ?? new Map<number, number>();
    slots.set(slot, now);
    this.confirmations.set(payload, slots);
    for (const wake of [...this.confirmationWaiters]) wake();
  }

  /**
   * Forgets `payload` here, then waits until every other live server confirmed that it forgot it too (their key
   * caches and nginx admissions), at most ACK_WAIT_MS; `sinceMs` is when the change was about to be committed.
   * A server that does not confirm in time has lost its notification connection (it then caches nothing) or hangs:
   * the wait ends anyway and says which.
   */
  async invalidateEverywhere(payload: string, sinceMs: number): Promise<void> {
    await this.invalidate(payload);
    if (!this.cluster) return;
    const others = (await this.cluster.liveSlots()).filter((slot) => slot !== this.cluster!.slot);
    const missing = () => others.filter((slot) => (this.confirmations.get(payload)?.get(slot) ?? -Infinity) < sinceMs);
    const deadline = Date.now() + ACK_WAIT_MS;
    while (missing().length > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.confirmationWaiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, deadline - Date.now());
        this.confirmationWaiters.add(done);
      });
    }
    if (missing().length > 0) this.log(`${payload}: servers in slots ${missing().join(', ')} did not confirm within ${ACK_WAIT_MS} ms that they forgot it`);
  }

  /** Forgets what `payload` names (`key:<id>`, `user:<id>`, `session:<hash>` nothing, anything else: all); resolves when the listeners did too. */
  invalidate(payload: string): Promise<void> {
    this.generation++;
    if (payload.startsWith('key:')) this.keys.delete(payload.slice(4));
    else if (payload.startsWith('session:')) {
      // A console sign-out: sessions are not cached here, keys stay valid.
    } else if (payload.startsWith('user:')) {
      const userId = Number(payload.slice(5));
      for (const [id, entry] of this.keys) if (entry.user.id === userId) this.keys.delete(id);
    } else this.keys.clear();
    return this.tellListeners(payload);
  }

  invalidateAll(): Promise<void> {
    this.generation++;
    this.keys.clear();
    return this.tellListeners('all');
  }

  /** `listener` runs at every invalidation with its payload ('all' for all); `invalidate` waits for it (it must not reject). */
  onInvalidate(listener: (payload: string) => Promise<void>): void {
    this.listeners.push(listener);
  }

  private async tellListeners(payload: string): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener(payload)));
  }

  /**
   * Resolves an API key token; undefined for an unknown, deleted, wrong or expired key. Answers synchronously when
   * the cache knows the key (the hot path of every API call with a key), else with a promise.
   */
  resolveKey(token: string): Principal | undefined | Promise<Principal | undefined> {
    const parsed = parseApiKeyToken(token);
    if (!parsed) return undefined;
    const now = this.clock.nowMs();
    const cached = this.keys.get(parsed.id);
    if (cached && this.hub.isLive && now - cached.cachedAt < CACHE_TTL_MS) return this.checkKey(parsed, cached, now);
    return this.loadKey(parsed.id, now).then((entry) => (entry ? this.checkKey(parsed, entry, now) : undefined));
  }

  private checkKey(parsed: { id: string; secretHash: Buffer }, entry: CachedKey, now: number): Principal | undefined {
    if (!digestsEqual(entry.secretHash, parsed.secretHash)) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= now) return undefined;
    if (entry.lastUsedAt === null || now - entry.lastUsedAt >= HOUR) {
      entry.lastUsedAt = now;
      markApiKeyUsed(this.pool, parsed.id, new Date(now)).catch((error: Error) => this.log(`last_used_at: ${error.message}`));
    }
    return entry.principal;
  }

  private async loadKey(id: string, now: number): Promise<CachedKey | undefined> {
    const generation = this.generation;
    const row = await findApiKey(this.pool, id);
    if (!row) return undefined;
    const user = await findUserById(this.pool, row.user_id);
    if (!user) return undefined;
    const caller = callerUser(user);
    const entry: CachedKey = {
      secretHash: row.secret_hash,
      expiresAt: row.expires_at?.getTime() ?? null,
      lastUsedAt: row.last_used_at?.getTime() ?? null,
      user: caller,
      principal: { via: 'key', user: caller, keyId: id },
      cachedAt: now,
    };
    if (generation === this.generation && this.hub.isLive) this.keys.set(id, entry);
    return entry;
  }

  /**
   * Resolves a session cookie, enforcing 12 h idle and 7 days absolute expiry. `touch: false` for a check of an open
   * stream (stream-guard.ts), which is no activity of the person and must not keep the session from idling out.
   */
  async resolveSession(token: string, options: { touch?: boolean } = {}): Promise<Principal | undefined> {
    const sessionHash = sha256(token);
    const session = await findSession(this.pool, sessionHash);
    const now = this.clock.now();
    if (!session) return undefined;
    if (session.expires_at <= now || now.getTime() - session.last_seen_at.getTime() >= SESSION_IDLE_MS) return undefined;
    const user = await findUserById(this.pool, session.user_id);
    if (!user) return undefined;
    if (options.touch !== false && now.getTime() - session.last_seen_at.getTime() >= SESSION_TOUCH_MS) await touchSession(this.pool, sessionHash, now);
    return { via: 'session', user: callerUser(user), sessionHash };
  }
}

export { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS };

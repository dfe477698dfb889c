// Who may use a workspace address (spec 5, items 2, 7, 9): an API key in `Svc-Authorization` (read and removed;
// `Authorization` belongs to the application), or the host's own session cookie, set by a single-use sign-in link
// the console mints. Team members who can see the workspace are admitted; a `restricted` workspace admits only
// those who may use it (developers and admins). Decisions are cached briefly; a deleted key fails at once (the key
// cache is dropped by NOTIFY).
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type pg from 'pg';
import { teamAccess } from '../auth/access.ts';
import { callerUser, readCookie, type CallerUser, type CredentialResolver } from '../auth/credentials.ts';
import type { Clock } from '../core/clock.ts';
import { findUserById } from '../store/users.ts';
import { consumeWorkspaceSignInLink, findWorkspaceSession, insertWorkspaceSession, insertWorkspaceSignInLink } from '../store/workspace-sign-in.ts';

export const WORKSPACE_SESSION_COOKIE = 'svc_ws_session';
/** The path on every workspace host that takes a sign-in link. */
export const SIGN_IN_PATH = '/.svc/sign-in';
export const SIGN_IN_LINK_MS = 2 * 60_000;
export const WORKSPACE_SESSION_MS = 12 * 3_600_000;
const DECISION_CACHE_MS = 5_000;

export interface AccessDeps {
  pool: pg.Pool;
  credentials: CredentialResolver;
  clock: Clock;
}

export interface WorkspaceForAccess {
  id: number;
  team_id: number;
  restricted: boolean;
}

export type AccessDecision =
  | { ok: true; user: CallerUser; via: 'key' | 'cookie'; keyId?: string }
  | { ok: false; reason: 'no-credentials' | 'bad-key' | 'not-allowed' };

const sha256 = (token: string) => createHash('sha256').update(token).digest();

/** The bearer token of `Svc-Authorization`, when it has one. */
export function svcAuthorizationKey(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['svc-authorization'];
  const match = typeof value === 'string' ? /^Bearer\s+(\S+)$/i.exec(value.trim()) : null;
  return match?.[1];
}

export class WorkspaceAccess {
  private readonly decisions = new Map<string, { allowed: boolean; until: number }>();
  private readonly sessions = new Map<string, { userId: number; until: number }>();

  constructor(private readonly deps: AccessDeps) {}

  /** `fresh`: decided from the store, not from the brief caches (an open stream checked again, stream-guard.ts). */
  async check(headers: IncomingHttpHeaders, host: string, workspace: WorkspaceForAccess, fresh = false): Promise<AccessDecision> {
    const key = svcAuthorizationKey(headers);
    if (key !== undefined) {
      const principal = await this.deps.credentials.resolveKey(key);
      if (!principal || principal.via !== 'key') return { ok: false, reason: 'bad-key' };
      return (await this.allowed(principal.user, workspace, fresh)) ? { ok: true, user: principal.user, via: 'key', keyId: principal.keyId } : { ok: false, reason: 'not-allowed' };
    }
    const token = readCookie(typeof headers.cookie === 'string' ? headers.cookie : undefined, WORKSPACE_SESSION_COOKIE);
    if (!token) return { ok: false, reason: 'no-credentials' };
    const userId = await this.sessionUser(token, host, fresh);
    if (userId === undefined) return { ok: false, reason: 'no-credentials' };
    const row = await findUserById(this.deps.pool, userId);
    if (!row) return { ok: false, reason: 'no-credentials' };
    const user = callerUser(row);
    return (await this.allowed(user, workspace, fresh)) ? { ok: true, user, via: 'cookie' } : { ok: false, reason: 'not-allowed' };
  }

  private async sessionUser(token: string, host: string, fresh: boolean): Promise<number | undefined> {
    const now = this.deps.clock.nowMs();
    const cacheKey = `${host} ${token}`;
    const cached = this.sessions.get(cacheKey);
    if (cached && cached.until > now && !fresh) return cached.userId;
    const session = await findWorkspaceSession(this.deps.pool, sha256(token), host, new Date(now));
    if (!session) return undefined;
    this.sessions.set(cacheKey, { userId: session.user_id, until: now + DECISION_CACHE_MS });
    return session.user_id;
  }

  private async allowed(user: CallerUser, workspace: WorkspaceForAccess, fresh: boolean): Promise<boolean> {
    const now = this.deps.clock.nowMs();
    const cacheKey = `${user.id}/${workspace.id}/${workspace.restricted}`;
    const cached = this.decisions.get(cacheKey);
    if (cached && cached.until > now && !fresh) return cached.allowed;
    const permissions: string[] = await teamAccess(this.deps.pool, user, workspace.team_id).then((a) => a.permissions, () => []);
    const allowed = permissions.includes(workspace.restricted ? 'workspace.use' : 'workspace.view');
    if (this.decisions.size > 10_000) this.decisions.clear();
    this.decisions.set(cacheKey, { allowed, until: now + DECISION_CACHE_MS });
    return allowed;
  }

  /** Membership changed somewhere: decide afresh. */
  forgetDecisions(): void {
    this.decisions.clear();
  }

  /** A link for `host` that signs `user` in there once, within SIGN_IN_LINK_MS, then goes to `nextPath`. */
  async mintLink(workspaceId: number, host: string, userId: number, nextPath: string): Promise<{ token: string; expiresAt: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(this.deps.clock.nowMs() + SIGN_IN_LINK_MS);
    await insertWorkspaceSignInLink(this.deps.pool, { tokenHash: sha256(token), workspaceId, host, userId, nextPath, expiresAt });
    return { token, expiresAt };
  }

  /** Uses a link: a new session token for the host and where to go, or undefined when the link is used or late. */
  async redeemLink(token: string, host: string): Promise<{ sessionToken: string; nextPath: string } | undefined> {
    const now = this.deps.clock.now();
    const link = await consumeWorkspaceSignInLink(this.deps.pool, sha256(token), host, now);
    if (!link) return undefined;
    const sessionToken = randomBytes(32).toString('base64url');
    await insertWorkspaceSession(this.deps.pool, {
      tokenHash: sha256(sessionToken),
      workspaceId: link.workspace_id,
      host,
      userId: link.user_id,
      at: now,
      expiresAt: new Date(now.getTime() + WORKSPACE_SESSION_MS),
    });
    return { sessionToken, nextPath: link.next_path };
  }
}

/** The request headers the application sees: without `Svc-Authorization` and without the router's own cookie. */
export function headersForUpstream(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'svc-authorization': _removed, ...rest } = headers;
  if (typeof rest.cookie === 'string') {
    const kept = rest.cookie
      .split(';')
      .map((part) => part.trim())
      .filter((part) => part && !part.startsWith(`${WORKSPACE_SESSION_COOKIE}=`));
    if (kept.length > 0) rest.cookie = kept.join('; ');
    else delete rest.cookie;
  }
  return rest;
}

/** A state-changing request sent by a page of another site: not `host` itself, not the console at `consoleUrl`. */
export function isCrossSite(method: string, headers: IncomingHttpHeaders, host: string, consoleUrl: string): boolean {
  if (['GET', 'HEAD', 'OPTIONS'].includes(method)) return false;
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers.origin;
  if (!origin || origin === 'null') return origin === 'null';
  try {
    const from = new URL(origin);
    return from.hostname !== host && from.origin !== new URL(consoleUrl).origin;
  } catch {
    return true;
  }
}

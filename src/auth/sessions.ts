// Browser sessions and single-use sign-in links.
import type { Queryable } from '../store/database.ts';
import { DAY, HOUR, MINUTE } from '../core/clock.ts';
import { randomToken, sha256 } from '../core/secrets.ts';
import { consumeSignInLink, deleteSession, insertSession, insertSignInLink } from '../store/sessions.ts';

export const SESSION_IDLE_MS = 12 * HOUR;
export const SESSION_ABSOLUTE_MS = 7 * DAY;

export interface NewSession {
  token: string;
  expiresAt: Date;
}

export async function startSession(db: Queryable, userId: number, now: Date): Promise<NewSession> {
  const token = randomToken(32);
  const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
  await insertSession(db, { tokenHash: sha256(token), userId, at: now, expiresAt });
  return { token, expiresAt };
}

/** Ends the session; svc_auth tells every server, so that the event streams it opened end too. */
export async function endSession(db: Queryable, sessionHash: Buffer): Promise<void> {
  await deleteSession(db, sessionHash);
  await db.query("SELECT pg_notify('svc_auth', $1)", [`session:${sessionHash.toString('hex')}`]);
}

/** The Set-Cookie value for a session; Max-Age follows the absolute expiry. */
export function sessionCookie(name: string, token: string, maxAgeMs: number): string {
  return `${name}=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`;
}

export function clearedSessionCookie(name: string): string {
  return `${name}=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`;
}

export interface SignInLink {
  url: string;
  token: string;
  expiresAt: Date;
}

export async function createSignInLink(
  db: Queryable,
  request: { userId: number; createdBy: number | null; baseUrl: string; minutes: number; now: Date },
): Promise<SignInLink> {
  const token = randomToken(32);
  const expiresAt = new Date(request.now.getTime() + request.minutes * MINUTE);
  await insertSignInLink(db, {
    tokenHash: sha256(token),
    userId: request.userId,
    createdBy: request.createdBy,
    at: request.now,
    expiresAt,
  });
  return { url: `${request.baseUrl}/sign-in#token=${token}`, token, expiresAt };
}

/** Uses up a sign-in link; the user id when it was valid, unused and not expired. */
export async function redeemSignInLink(db: Queryable, token: string, now: Date): Promise<number | undefined> {
  return consumeSignInLink(db, sha256(token), now);
}

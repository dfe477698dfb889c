// The rights an API stream was admitted with, checked again while it is open (src/auth/stream-guard.ts): the
// credentials of its request still resolve to the same user, and (for a stream of a workspace or team) that user
// still holds the permission on the team. A shell, a forwarded port, a log follow and the event stream use it.
import type { FastifyRequest } from 'fastify';
import { teamAccess } from '../auth/access.ts';
import { readCredentials, type Principal } from '../auth/credentials.ts';
import type { TeamPermission } from '../auth/permissions.ts';
import type { GuardedStream, Revocation } from '../auth/stream-guard.ts';
import { findWorkspace } from '../store/workspaces.ts';
import type { ApiDeps } from './context.ts';

export interface StreamNeeds {
  /** The workspace the stream reaches: it must still exist. */
  workspaceId?: number;
  /** The team whose role must still grant `permission` (any role when no permission is named). */
  teamId?: number;
  permission?: TeamPermission;
}

/** The request's caller again, from the store (the key cache forgot a changed key before the guard asks). */
async function callerAgain(deps: ApiDeps, request: FastifyRequest): Promise<Principal | undefined> {
  const credentials = readCredentials(request.headers);
  if (credentials.kind === 'key') return deps.credentials.resolveKey(credentials.token);
  if (credentials.kind === 'session') return deps.credentials.resolveSession(credentials.token, { touch: false });
  return undefined;
}

/** Checks a stream's rights as they are now: undefined while held, else why they are not. */
export async function recheckStream(deps: ApiDeps, request: FastifyRequest, needs: StreamNeeds): Promise<Revocation | undefined> {
  const opened = request.principal!;
  const now = await callerAgain(deps, request);
  if (!now || now.user.id !== opened.user.id) {
    return { status: 401, reason: opened.via === 'key' ? 'The API key this stream was opened with was deleted, regenerated or has expired.' : 'The session this stream was opened with has ended; sign in again.' };
  }
  if (needs.workspaceId !== undefined) {
    const row = await findWorkspace(deps.pool, needs.workspaceId);
    if (!row || row.deleted_at) return { status: 403, reason: 'The workspace was deleted.' };
  }
  if (needs.teamId === undefined) return undefined;
  const access = await teamAccess(deps.pool, now.user, needs.teamId).catch(() => undefined);
  if (!access) return { status: 403, reason: 'You are no longer a member of the team.' };
  if (needs.permission && !access.permissions.includes(needs.permission)) return { status: 403, reason: `Your role no longer allows ${needs.permission}.` };
  return undefined;
}

/**
 * Registers an open stream of `request` with the server's guard; the answer forgets it (call it at the stream's end).
 * `checkNow`: check once at once (the admission was long before, see StreamGuard.open).
 */
export function guardStream(deps: ApiDeps, request: FastifyRequest, needs: StreamNeeds, revoke: (revocation: Revocation) => void, checkNow = false): () => void {
  const principal = request.principal!;
  const stream: GuardedStream = {
    userId: principal.user.id,
    keyId: principal.via === 'key' ? principal.keyId : undefined,
    sessionHash: principal.via === 'session' ? principal.sessionHash.toString('hex') : undefined,
    teamId: needs.teamId,
    workspaceId: needs.workspaceId,
    recheck: () => recheckStream(deps, request, needs),
    revoke,
  };
  return deps.streams.open(stream, checkNow);
}

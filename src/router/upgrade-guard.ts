// A WebSocket (the editor's, an application's) relayed by the router stays open only while its caller may still
// use the address (src/auth/stream-guard.ts): a deleted key, a removal from the team or a workspace made restricted
// to a viewer closes it with a close frame (4401, 4403) and the reason.
import type { IncomingMessage } from 'node:http';
import type pg from 'pg';
import type { CallerUser } from '../auth/credentials.ts';
import { revocationCloseCode, type Revocation, type StreamGuard } from '../auth/stream-guard.ts';
import { findWorkspace } from '../store/workspaces.ts';
import type { WorkspaceAccess, WorkspaceForAccess } from './access.ts';
import type { RelayedUpgrade } from './proxy.ts';

export interface UpgradeGuardDeps {
  pool: pg.Pool;
  access: WorkspaceAccess;
  streams: StreamGuard;
}

/** Who opened an upgrade, and how its relayed connection is registered (the answer releases it). */
export interface UpgradeHolder {
  user: CallerUser;
  register(relayed: RelayedUpgrade): () => void;
}

/**
 * Who opened the upgrade to `subject` on `host` (it was just admitted), and the registration of the relayed
 * connection. `restricted`: a custom domain decides by its own setting, not the workspace's.
 */
export async function upgradeGuard(deps: UpgradeGuardDeps, request: IncomingMessage, host: string, subject: WorkspaceForAccess, restricted?: boolean): Promise<UpgradeHolder | undefined> {
  const opened = await deps.access.check(request.headers, host, { ...subject, restricted: restricted ?? subject.restricted });
  if (!opened.ok) return undefined;
  const recheck = async (): Promise<Revocation | undefined> => {
    const row = await findWorkspace(deps.pool, subject.id);
    if (!row || row.deleted_at) return { status: 403, reason: 'The workspace was deleted.' };
    const now = await deps.access.check(request.headers, host, { id: row.id, team_id: row.team_id, restricted: restricted ?? row.restricted }, true);
    if (now.ok && now.user.id === opened.user.id) return undefined;
    if (!now.ok && now.reason === 'not-allowed') return { status: 403, reason: 'You may no longer use this workspace.' };
    return { status: 401, reason: opened.via === 'key' ? 'The API key this connection was opened with was deleted or changed.' : 'Your sign-in for this address has ended.' };
  };
  const register = (relayed: RelayedUpgrade) =>
    deps.streams.open(
      { userId: opened.user.id, keyId: opened.keyId, teamId: subject.team_id, workspaceId: subject.id, recheck, revoke: (revocation) => relayed.close(revocationCloseCode(revocation), revocation.reason) },
      // a request held while the workspace woke was admitted long before
      true,
    );
  return { user: opened.user, register };
}

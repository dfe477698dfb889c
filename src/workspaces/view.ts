// The Workspace resource of spec 2.3 as clients see it, and its addresses under the workspace domain.

import type { WorkspaceListRow } from '../store/workspaces.ts';

export interface WorkspaceUrls {
  /** `http` or `https`, as the console's base URL. */
  scheme: string;
  /** The workspace domain (default `localhost`, so `*.localhost` works without DNS set-up). */
  domain: string;
  /** Port of the listener serving workspace hosts; omitted from URLs when it is the scheme's default. */
  port: number;
}

/** The host label of a workspace: `w<id>`. Its dev URL is `w<id>.<domain>`, its editor `ide-w<id>.<domain>`. */
export function workspaceLabel(id: number): string {
  return `w${id}`;
}

/** What comes before and after a host label in a workspace's addresses (`http://` and `.localhost:8080/`). */
export function addressParts(urls: WorkspaceUrls): { before: string; after: string } {
  const defaultPort = urls.scheme === 'https' ? 443 : 80;
  return { before: `${urls.scheme}://`, after: `.${urls.domain}${urls.port === defaultPort ? '' : `:${urls.port}`}/` };
}

function address(urls: WorkspaceUrls, host: string): string {
  const { before, after } = addressParts(urls);
  return `${before}${host}${after}`;
}

export function workspaceAddresses(id: number, urls: WorkspaceUrls): { ide: string; dev: string } {
  return { ide: address(urls, `ide-${workspaceLabel(id)}`), dev: address(urls, workspaceLabel(id)) };
}

/** A public port's own host (spec 2.8): `w<id>-<port>.<domain>`. */
export function publicPortAddress(id: number, port: number, urls: WorkspaceUrls): string {
  return address(urls, `${workspaceLabel(id)}-${port}`);
}

export function workspaceUrlsFromBase(baseUrl: string, domain: string): WorkspaceUrls {
  const url = new URL(baseUrl);
  const scheme = url.protocol.replace(':', '');
  return { scheme, domain, port: url.port ? Number(url.port) : scheme === 'https' ? 443 : 80 };
}

export function workspaceView(row: WorkspaceListRow, urls: WorkspaceUrls, permissions?: string[]) {
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    plan: row.plan,
    base_image: row.base_image,
    git: row.git_repo ? { provider: row.git_provider ?? 'git', repo: row.git_repo, ref: row.git_ref ?? undefined, cloned: row.source_ready } : undefined,
    storage_gib: row.storage_gib,
    availability: row.availability,
    restricted: row.restricted,
    egress: row.egress,
    team_egress: row.team_egress,
    state: row.state,
    status_detail: row.status_detail,
    urls: workspaceAddresses(row.id, urls),
    vault_id: row.vault_id ?? undefined,
    single_node: row.single_node,
    idle_timeout_minutes: row.idle_timeout_minutes,
    last_archived_at: row.last_archived_at?.toISOString(),
    archived: row.archive_sha256 !== null,
    restored_from: row.restored_from ?? undefined,
    // Only a running editor pod can be older than the template; the next start uses the current one.
    upgrade_pending: row.upgrade_pending && row.state === 'running',
    created_by: row.created_by ?? undefined,
    owner_id: row.owner_id ?? undefined,
    needs_owner: row.needs_owner || row.owner_id === null,
    permissions,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    deleted_at: row.deleted_at?.toISOString(),
    purge_after: row.purge_after?.toISOString(),
  };
}

export type WorkspaceView = ReturnType<typeof workspaceView>;

import { FIRST_WORKSPACE_UID } from '../core/config.ts';
import type { Queryable } from './database.ts';
import type { WorkspaceStateName } from '../workspaces/lifecycle.ts';
import type { PinnedImage } from './landscapes.ts';
import type { NormalLandscape } from '../landscape/index.ts';

export interface WorkspaceRow {
  id: number;
  team_id: number;
  name: string;
  plan: string;
  base_image: string;
  /** `base_image` as pinned at the workspace's first start (none for the installation's base image). */
  base_image_pin: PinnedImage | null;
  git_provider: string | null;
  git_repo: string | null;
  git_ref: string | null;
  /** The volume holds its source (cloned or prepared); false until then and after a failed clone (migration 054). */
  source_ready: boolean;
  storage_gib: number;
  availability: string;
  restricted: boolean;
  /** The workspace's own egress setting and its team's (kept by migration 044's triggers); pods go out when both are on. */
  egress: 'on' | 'off';
  team_egress: 'on' | 'off';
  single_node: boolean;
  state: WorkspaceStateName;
  status_detail: string;
  sleep_reason: string | null;
  before_delete: string | null;
  uid: number;
  /** The workspace's place in the installation's UID range: its UID is `security.defaultUid` + this (migration 035). */
  uid_index: number;
  /** Set while its volume is re-owned (Stopped "Changing the owner of the volume"): the state it returns to. */
  before_reown: string | null;
  /** The pod template the running editor pod was made from; `upgrade_pending` when older than the current one (036). */
  pod_template: string | null;
  upgrade_pending: boolean;
  idle_timeout_minutes: number;
  last_activity_at: Date | null;
  /** When it last went to sleep (migration 062); its sleep_reason says why. */
  slept_at: Date | null;
  /** A keep-awake (migration 062): the idle chore leaves the workspace running until then; who asked, and when. */
  keep_awake_until: Date | null;
  keep_awake_by: number | null;
  keep_awake_asked_at: Date | null;
  editor_host: string | null;
  editor_port: number | null;
  last_archived_at: Date | null;
  archive_sha256: string | null;
  restored_from: number | null;
  created_by: number | null;
  owner_id: number | null;
  /** The owner left the team (or was removed): a transfer must be accepted (migration 017). */
  needs_owner: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  purge_after: Date | null;
  version: number;
  /** The workspace's vault of secrets (made with the workspace), read along with the row. */
  vault_id: number | null;
  /** The owner's e-mail and name, read along with the row: who the workspace UID is in its pods. */
  owner_email?: string | null;
  owner_name?: string | null;
  /** The owner's dotfiles repository (migration 048), applied in HOME at the workspace's first start. */
  owner_dotfiles?: string | null;
}

export interface NewWorkspace {
  teamId: number;
  name: string;
  plan: string;
  baseImage: string;
  git: { provider: string; repo: string; ref: string | null } | null;
  storageGib: number;
  restricted: boolean;
  /** The workspace's own egress setting; `on` when absent. */
  egress?: 'on' | 'off';
  idleTimeoutMinutes: number;
  state: string;
  statusDetail: string;
  createdBy: number;
  at: Date;
  /** `security.defaultUid`: the first UID of the workspaces' range (default FIRST_WORKSPACE_UID). */
  firstUid?: number;
}

/** A workspace row with its vault's id. */
const COLUMNS = `*, (SELECT v.id FROM vaults v WHERE v.workspace_id = workspaces.id) AS vault_id,
  (SELECT u.email FROM users u WHERE u.id = workspaces.owner_id) AS owner_email,
  (SELECT u.name FROM users u WHERE u.id = workspaces.owner_id) AS owner_name,
  (SELECT u.dotfiles_url FROM users u WHERE u.id = workspaces.owner_id) AS owner_dotfiles`;

/** Inserts the workspace and its (empty) vault in one statement; its UID is the next place in the UID range. */
export async function insertWorkspace(db: Queryable, ws: NewWorkspace): Promise<WorkspaceRow> {
  return (
    await db.query<WorkspaceRow>(
      `WITH place AS (SELECT nextval('workspace_uids') - ${FIRST_WORKSPACE_UID} AS i),
       inserted AS (
         INSERT INTO workspaces (team_id, name, plan, base_image, git_provider, git_repo, git_ref, storage_gib, restricted,
           idle_timeout_minutes, state, status_detail, created_by, owner_id, created_at, updated_at, last_activity_at, uid_index, uid, source_ready, egress)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14, $14, $14, place.i, $15 + place.i, false, $16 FROM place RETURNING *),
       vault AS (INSERT INTO vaults (workspace_id, created_at) SELECT id, created_at FROM inserted RETURNING id)
       SELECT inserted.*, vault.id AS vault_id, u.email AS owner_email, u.name AS owner_name, u.dotfiles_url AS owner_dotfiles
       FROM inserted CROSS JOIN vault LEFT JOIN users u ON u.id = inserted.owner_id`,
      [ws.teamId, ws.name, ws.plan, ws.baseImage, ws.git?.provider ?? null, ws.git?.repo ?? null, ws.git?.ref ?? null,
        ws.storageGib, ws.restricted, ws.idleTimeoutMinutes, ws.state, ws.statusDetail, ws.createdBy, ws.at, ws.firstUid ?? FIRST_WORKSPACE_UID, ws.egress ?? 'on'],
    )
  ).rows[0];
}

export async function findWorkspace(db: Queryable, id: number, lock = false): Promise<WorkspaceRow | undefined> {
  return (await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE id = $1${lock ? ' FOR UPDATE OF workspaces' : ''}`, [id])).rows[0];
}

/** What a workspace's view shows of it (workspaces/view.ts); a list page reads these columns (store/workspace-pages.ts). */
export type WorkspaceListRow = Pick<
  WorkspaceRow,
  | 'id' | 'team_id' | 'name' | 'plan' | 'base_image' | 'git_provider' | 'git_repo' | 'git_ref' | 'source_ready' | 'storage_gib' | 'availability'
  | 'restricted' | 'egress' | 'team_egress' | 'single_node' | 'state' | 'status_detail' | 'idle_timeout_minutes' | 'last_archived_at' | 'archive_sha256'
  | 'restored_from' | 'upgrade_pending' | 'created_by' | 'owner_id' | 'needs_owner' | 'created_at' | 'updated_at' | 'deleted_at'
  | 'purge_after' | 'vault_id'
>;

type Changes = Partial<Omit<WorkspaceRow, 'id' | 'team_id' | 'created_at' | 'version' | 'vault_id' | 'uid_index'>>;

/** Applies `changes`, bumps the version; with `expectedVersion` only when it is current (else undefined). */
export async function updateWorkspace(
  db: Queryable,
  id: number,
  changes: Changes,
  at: Date,
  expectedVersion?: number,
): Promise<WorkspaceRow | undefined> {
  const entries = Object.entries({ ...changes, updated_at: at });
  const sets = entries.map(([column], i) => `${column} = $${i + 2}`).join(', ');
  const guard = expectedVersion === undefined ? '' : ` AND version = $${entries.length + 2}`;
  const params = [id, ...entries.map(([, value]) => value), ...(expectedVersion === undefined ? [] : [expectedVersion])];
  return (
    await db.query<WorkspaceRow>(`UPDATE workspaces SET ${sets}, version = version + 1 WHERE id = $1${guard} RETURNING ${COLUMNS}`, params)
  ).rows[0];
}

export async function deleteWorkspaceRow(db: Queryable, id: number): Promise<void> {
  await db.query('DELETE FROM workspaces WHERE id = $1', [id]);
}

export interface TeamStorage {
  quotaGib: number;
  usedGib: number;
  deletedWorkspaces: number;
  deletedGib: number;
}

/** Storage a team's workspaces hold, soft-deleted ones included (they keep their volume until purged). */
export async function teamStorage(db: Queryable, teamId: number): Promise<TeamStorage> {
  const row = (
    await db.query<{ quota: number; used: number; deleted_count: number; deleted_gib: number }>(
      `SELECT t.storage_quota_gib AS quota,
              COALESCE(sum(w.storage_gib), 0)::int AS used,
              count(w.id) FILTER (WHERE w.deleted_at IS NOT NULL)::int AS deleted_count,
              COALESCE(sum(w.storage_gib) FILTER (WHERE w.deleted_at IS NOT NULL), 0)::int AS deleted_gib
       FROM teams t LEFT JOIN workspaces w ON w.team_id = t.id WHERE t.id = $1 GROUP BY t.id`,
      [teamId],
    )
  ).rows[0];
  return { quotaGib: row.quota, usedGib: row.used, deletedWorkspaces: row.deleted_count, deletedGib: row.deleted_gib };
}

export async function workspacesToPurge(db: Queryable, now: Date): Promise<number[]> {
  return (await db.query<{ id: number }>('SELECT id FROM workspaces WHERE deleted_at IS NOT NULL AND purge_after <= $1', [now])).rows.map((r) => r.id);
}

export async function idleWorkspaces(db: Queryable, now: Date): Promise<number[]> {
  return (
    await db.query<{ id: number }>(
      `SELECT id FROM workspaces WHERE state = 'running' AND deleted_at IS NULL
       AND last_activity_at < $1::timestamptz - make_interval(mins => idle_timeout_minutes)
       AND (keep_awake_until IS NULL OR keep_awake_until <= $1)`,
      [now],
    )
  ).rows.map((r) => r.id);
}

export async function liveWorkspaceNamed(db: Queryable, teamId: number, name: string): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM workspaces WHERE team_id = $1 AND lower(name) = lower($2) AND deleted_at IS NULL', [teamId, name]);
  return (found.rowCount ?? 0) > 0;
}

/** Workspaces that run now (not deleted), with what the runtime driver needs to reach them. */
export async function runningWorkspaces(db: Queryable): Promise<Array<Pick<WorkspaceRow, 'id' | 'team_id' | 'uid' | 'storage_gib'>>> {
  return (await db.query("SELECT id, team_id, uid, storage_gib FROM workspaces WHERE state = 'running' AND deleted_at IS NULL ORDER BY id")).rows;
}

/** Records the base image pinned for the workspace (not a change its clients see: the version stays). */
export async function saveBaseImagePin(db: Queryable, id: number, pin: PinnedImage): Promise<WorkspaceRow | undefined> {
  return (await db.query<WorkspaceRow>(`UPDATE workspaces SET base_image_pin = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [id, JSON.stringify(pin)])).rows[0];
}

/** The user's live workspaces in those teams start needing an owner (they left); answers the ones that changed. */
export async function markNeedsOwner(db: Queryable, ownerId: number, teamIds: number[], at: Date): Promise<WorkspaceRow[]> {
  return (
    await db.query<WorkspaceRow>(
      `UPDATE workspaces SET needs_owner = true, updated_at = $3, version = version + 1
       WHERE owner_id = $1 AND team_id = ANY($2) AND deleted_at IS NULL AND NOT needs_owner RETURNING ${COLUMNS}`,
      [ownerId, teamIds, at],
    )
  ).rows;
}

/**
 * The team's workspaces that hold pods or are about to (every state but sleeping, stopped and deleted), with their
 * synced landscape when one is deployed: what counts against the team's CPU and memory quotas (src/capacity).
 */
/** The team's workspaces that are not deleted, whole rows (what the runtime is told of each). */
export async function liveTeamWorkspaces(db: Queryable, teamId: number): Promise<WorkspaceRow[]> {
  return (await db.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE team_id = $1 AND deleted_at IS NULL ORDER BY id`, [teamId])).rows;
}

export async function awakeTeamWorkspaces(db: Queryable, teamId: number, exceptId = 0): Promise<Array<{ id: number; plan: string; landscape?: NormalLandscape }>> {
  const rows = (
    await db.query<{ id: number; plan: string; normal: NormalLandscape | null }>(
      `SELECT w.id, w.plan, CASE WHEN l.torn_down THEN NULL ELSE l.normal END AS normal
       FROM workspaces w LEFT JOIN landscapes l ON l.workspace_id = w.id
       WHERE w.team_id = $1 AND w.id <> $2 AND w.deleted_at IS NULL AND w.state NOT IN ('sleeping', 'stopped', 'deleting')
       ORDER BY w.id`,
      [teamId, exceptId],
    )
  ).rows;
  return rows.map((row) => ({ id: row.id, plan: row.plan, ...(row.normal ? { landscape: row.normal } : {}) }));
}

/**
 * The team's workspaces (soft-deleted ones included) whose volume still belongs to another UID than the one
 * `security.defaultUid` gives them, or whose re-owning was cut off (spec 4.7), in id order.
 */
export async function workspacesNeedingOwner(db: Queryable, teamId: number, firstUid: number): Promise<WorkspaceRow[]> {
  return (
    await db.query<WorkspaceRow>(
      `SELECT ${COLUMNS} FROM workspaces WHERE team_id = $1 AND (uid <> $2 + uid_index OR before_reown IS NOT NULL) ORDER BY id`,
      [teamId, firstUid],
    )
  ).rows;
}

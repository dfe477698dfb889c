import type { SealedSecret } from '../core/secret-box.ts';
import type { NormalLandscape } from '../landscape/index.ts';
import type { PreparedImage } from '../runtime/image.ts';

/** The image a Sync pinned for a `container` service: the reference as written and what it resolved to. */
export interface PinnedImage extends PreparedImage {
  image: string;
}
import type { Queryable } from './database.ts';

export interface DeployedLandscapeRow {
  workspace_id: number;
  profile: string | null;
  file_text: string;
  normal: NormalLandscape;
  hash: string;
  variables_hash: string;
  torn_down: boolean;
  synced_at: Date;
  synced_by: number | null;
  updated_at: Date;
  env_nonce: Buffer | null;
  env_ciphertext: Buffer | null;
  env_tag: Buffer | null;
  env_key_id: string | null;
  /** Service name -> status last seen by the status watch (to tell changes). */
  statuses: Record<string, string>;
  /** Service name -> the image its replicas run (container services). */
  images: Record<string, PinnedImage>;
}

/** The sealed per-service env of the deployed landscape, when it has one. */
export function sealedEnvOf(row: DeployedLandscapeRow): SealedSecret | undefined {
  if (!row.env_nonce || !row.env_ciphertext || !row.env_tag || !row.env_key_id) return undefined;
  return { nonce: row.env_nonce, ciphertext: row.env_ciphertext, tag: row.env_tag, keyId: row.env_key_id };
}

export async function findDeployedLandscape(db: Queryable, workspaceId: number): Promise<DeployedLandscapeRow | undefined> {
  return (await db.query<DeployedLandscapeRow>('SELECT * FROM landscapes WHERE workspace_id = $1', [workspaceId])).rows[0];
}

export async function saveDeployedLandscape(
  db: Queryable,
  deployed: {
    workspaceId: number;
    profile: string | null;
    text: string;
    normal: NormalLandscape;
    hash: string;
    variablesHash: string;
    env: SealedSecret;
    /** The images pinned for its container services (none: {}). */
    images?: Record<string, PinnedImage>;
    by: number | null;
    at: Date;
  },
): Promise<void> {
  const { env } = deployed;
  await db.query(
    `INSERT INTO landscapes (workspace_id, profile, file_text, normal, hash, variables_hash, torn_down, synced_at, synced_by, updated_at,
       env_nonce, env_ciphertext, env_tag, env_key_id, images)
     VALUES ($1, $2, $3, $4, $5, $6, false, $7, $8, $7, $9, $10, $11, $12, $13)
     ON CONFLICT (workspace_id) DO UPDATE SET profile = EXCLUDED.profile, file_text = EXCLUDED.file_text, normal = EXCLUDED.normal,
       hash = EXCLUDED.hash, variables_hash = EXCLUDED.variables_hash, torn_down = false, synced_at = EXCLUDED.synced_at,
       synced_by = EXCLUDED.synced_by, updated_at = EXCLUDED.updated_at, env_nonce = EXCLUDED.env_nonce,
       env_ciphertext = EXCLUDED.env_ciphertext, env_tag = EXCLUDED.env_tag, env_key_id = EXCLUDED.env_key_id, images = EXCLUDED.images`,
    [deployed.workspaceId, deployed.profile, deployed.text, JSON.stringify(deployed.normal), deployed.hash, deployed.variablesHash, deployed.at, deployed.by,
      env.nonce, env.ciphertext, env.tag, env.keyId, JSON.stringify(deployed.images ?? {})],
  );
}

export async function markTornDown(db: Queryable, workspaceId: number, at: Date): Promise<boolean> {
  return ((await db.query('UPDATE landscapes SET torn_down = true, updated_at = $2 WHERE workspace_id = $1', [workspaceId, at])).rowCount ?? 0) > 0;
}

/** Records the statuses the watch saw; answers whether they differ from the ones recorded before. */
export async function recordServiceStatuses(db: Queryable, workspaceId: number, statuses: Record<string, string>): Promise<boolean> {
  const result = await db.query(
    'UPDATE landscapes SET statuses = $2 WHERE workspace_id = $1 AND statuses::text IS DISTINCT FROM $2::json::text',
    [workspaceId, JSON.stringify(statuses)],
  );
  return (result.rowCount ?? 0) > 0;
}

/**
 * Forgets the statuses last seen: after a change announced by itself (a run switch, a Sync), the status watch's next
 * look announces the statuses it reads, even when they came back to the ones last seen (a quick restart).
 */
export async function forgetServiceStatuses(db: Queryable, workspaceId: number): Promise<void> {
  await db.query(`UPDATE landscapes SET statuses = '{}' WHERE workspace_id = $1`, [workspaceId]);
}

/** Run switches that are off (a service without a row runs). */
export async function stoppedServices(db: Queryable, workspaceId: number): Promise<Set<string>> {
  const rows = await db.query<{ service: string }>('SELECT service FROM service_switches WHERE workspace_id = $1 AND NOT running', [workspaceId]);
  return new Set(rows.rows.map((r) => r.service));
}

export async function setRunSwitch(db: Queryable, workspaceId: number, services: string[], running: boolean, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO service_switches (workspace_id, service, running, updated_at) SELECT $1, unnest($2::text[]), $3, $4
     ON CONFLICT (workspace_id, service) DO UPDATE SET running = EXCLUDED.running, updated_at = EXCLUDED.updated_at`,
    [workspaceId, services, running, at],
  );
}

export interface ServiceActivityRow {
  service: string;
  last_request_at: Date;
  asleep: boolean;
}

export async function serviceActivity(db: Queryable, workspaceId: number): Promise<ServiceActivityRow[]> {
  return (await db.query<ServiceActivityRow>('SELECT service, last_request_at, asleep FROM service_activity WHERE workspace_id = $1', [workspaceId])).rows;
}

/** Records a request (or a start) of services: they are awake, and idle from `at` on. */
export async function markServicesAwake(db: Queryable, workspaceId: number, services: string[], at: Date): Promise<void> {
  await db.query(
    `INSERT INTO service_activity (workspace_id, service, last_request_at, asleep) SELECT $1, unnest($2::text[]), $3, false
     ON CONFLICT (workspace_id, service) DO UPDATE SET last_request_at = GREATEST(service_activity.last_request_at, EXCLUDED.last_request_at), asleep = false`,
    [workspaceId, services, at],
  );
}

export async function markServiceAsleep(db: Queryable, workspaceId: number, service: string): Promise<void> {
  await db.query('UPDATE service_activity SET asleep = true WHERE workspace_id = $1 AND service = $2', [workspaceId, service]);
}

/** Services whose run switch is off, and on-demand services asleep, in one round trip. */
export async function serviceRunStates(db: Queryable, workspaceId: number): Promise<{ stopped: Set<string>; asleep: Set<string> }> {
  const rows = await db.query<{ service: string; kind: 'stopped' | 'asleep' }>(
    `SELECT service, 'stopped' AS kind FROM service_switches WHERE workspace_id = $1 AND NOT running
     UNION ALL SELECT service, 'asleep' AS kind FROM service_activity WHERE workspace_id = $1 AND asleep`,
    [workspaceId],
  );
  const states = { stopped: new Set<string>(), asleep: new Set<string>() };
  for (const row of rows.rows) states[row.kind].add(row.service);
  return states;
}

/** Digests the deployed landscapes (not torn down) and the workspaces' base images run: what the image store's garbage collection keeps. */
export async function pinnedImageDigests(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ digest: string }>(
    `SELECT DISTINCT pin.value->>'digest' AS digest FROM landscapes, json_each(landscapes.images) AS pin WHERE NOT landscapes.torn_down
     UNION SELECT base_image_pin->>'digest' FROM workspaces WHERE base_image_pin IS NOT NULL`,
  );
  return rows.rows.map((r) => r.digest).filter((digest) => typeof digest === 'string');
}

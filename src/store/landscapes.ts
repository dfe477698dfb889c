import type { NormalLandscape } from '../landscape/index.ts';
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
}

export async function findDeployedLandscape(db: Queryable, workspaceId: number): Promise<DeployedLandscapeRow | undefined> {
  return (await db.query<DeployedLandscapeRow>('SELECT * FROM landscapes WHERE workspace_id = $1', [workspaceId])).rows[0];
}

export async function saveDeployedLandscape(
  db: Queryable,
  deployed: { workspaceId: number; profile: string | null; text: string; normal: NormalLandscape; hash: string; variablesHash: string; by: number | null; at: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO landscapes (workspace_id, profile, file_text, normal, hash, variables_hash, torn_down, synced_at, synced_by, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, false, $7, $8, $7)
     ON CONFLICT (workspace_id) DO UPDATE SET profile = EXCLUDED.profile, file_text = EXCLUDED.file_text, normal = EXCLUDED.normal,
       hash = EXCLUDED.hash, variables_hash = EXCLUDED.variables_hash, torn_down = false, synced_at = EXCLUDED.synced_at,
       synced_by = EXCLUDED.synced_by, updated_at = EXCLUDED.updated_at`,
    [deployed.workspaceId, deployed.profile, deployed.text, JSON.stringify(deployed.normal), deployed.hash, deployed.variablesHash, deployed.at, deployed.by],
  );
}

export async function markTornDown(db: Queryable, workspaceId: number, at: Date): Promise<boolean> {
  return ((await db.query('UPDATE landscapes SET torn_down = true, updated_at = $2 WHERE workspace_id = $1', [workspaceId, at])).rowCount ?? 0) > 0;
}

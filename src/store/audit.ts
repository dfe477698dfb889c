import type { Queryable } from './database.ts';

export interface AuditEntryRow {
  id: number;
  at: Date;
  actor_id: number | null;
  action: string;
  method: string;
  target: string;
  team_id: number | null;
  outcome: number;
  address: string | null;
  /** What a rule did (issue 39); null for entries of requests. */
  detail?: string | null;
}

export async function insertAuditEntry(db: Queryable, entry: Omit<AuditEntryRow, 'id'>): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (at, actor_id, action, method, target, team_id, outcome, address, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [entry.at, entry.actor_id, entry.action, entry.method, entry.target, entry.team_id, entry.outcome, entry.address, entry.detail ?? null],
  );
}

export interface AuditFilter {
  action?: string;
  actorId?: number;
  teamId?: number;
  since?: Date;
  until?: Date;
  before?: { at: Date; id: number };
}

/** Newest first by (time, id); filters combine; one more than `limit`. */
export async function listAuditEntries(db: Queryable, filter: AuditFilter, limit: number): Promise<AuditEntryRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const next = () => `$${params.length}`;
  if (filter.action !== undefined) (params.push(filter.action), where.push(`action = ${next()}`));
  if (filter.actorId !== undefined) (params.push(filter.actorId), where.push(`actor_id = ${next()}`));
  if (filter.teamId !== undefined) (params.push(filter.teamId), where.push(`team_id = ${next()}`));
  if (filter.since !== undefined) (params.push(filter.since), where.push(`at >= ${next()}`));
  if (filter.until !== undefined) (params.push(filter.until), where.push(`at < ${next()}`));
  if (filter.before !== undefined) {
    params.push(filter.before.at);
    const at = next();
    params.push(filter.before.id);
    where.push(`(at, id) < (${at}, ${next()})`);
  }
  params.push(limit + 1);
  const sql = `SELECT id, at, actor_id, action, method, target, team_id, outcome, address, detail FROM audit_log
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ${next()}`;
  return (await db.query<AuditEntryRow>(sql, params)).rows;
}

// Nightly backups (spec 2.8 `backups`, default true): a chore of the workspace runtime (runtime.ts) queues a
// `managed_service.dump` of kind nightly for every synchronized managed service whose provider can dump and whose
// entry does not say `backups: false`, once per backup night (from 02:00 UTC; a new instance waits for its first
// night); the job keeps the newest 7 and records how it ended on the managed service (dumps.ts). One that cannot be
// dumped (not running, no client tools) has its backup recorded as failed with the reason; a failed backup is tried
// again an hour later, within the night. Paused instances are skipped: their data has not changed since their last
// dump. The same chore removes dump files that have no row any more (their managed service purged). Time comes from
// the clock, so tests move it.
import { randomUUID } from 'node:crypto';
import { readdir, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { DAY, HOUR } from '../core/clock.ts';
import { Problem } from '../core/problems.ts';
import { withTransaction } from '../store/database.ts';
import { allManagedDumpIds, backupCandidates } from '../store/managed-dumps.ts';
import { findManagedService } from '../store/managed-services.ts';
import { findProvider, type Catalog } from './catalog.ts';
import type { InstancesDeps } from './instances.ts';
import { dumpRefusal, enqueueDump, recordNightlyBackup } from './dumps.ts';
import { movingStatuses } from './statuses.ts';
import type { ManagedHost } from './engine.ts';

/** A backup night starts at this hour, UTC. */
export const BACKUP_HOUR_UTC = 2;

/** The start of the backup night `now` belongs to: today's 02:00 UTC, or yesterday's before that hour. */
export function backupNightStart(now: Date): Date {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), BACKUP_HOUR_UTC);
  return new Date(start <= now.getTime() ? start : start - DAY);
}

/** How long after a failed nightly backup the next try waits (within the same night). */
export const BACKUP_RETRY_MS = HOUR;

/**
 * Whether an instance created at `created` whose newest nightly dump is `last` gets one now: none was made since
 * the backup night began, it existed before (a new one waits for its first night), and its last backup did not fail
 * (at `failed`) this night less than BACKUP_RETRY_MS ago.
 */
export function nightlyDue(now: Date, created: Date, last: Date | null, failed: Date | null = null): boolean {
  const night = backupNightStart(now).getTime();
  if ((last ?? created).getTime() >= night) return false;
  return failed === null || failed.getTime() < Math.max(night, now.getTime() - BACKUP_RETRY_MS);
}

export interface BackupDeps {
  pool: pg.Pool;
  driver: InstancesDeps['driver'];
  catalog: Catalog;
  host: ManagedHost;
  now: () => Date;
}

/**
 * Queues tonight's dumps that are due; answers the managed services queued. One that is refused (not running, no
 * client tools) has its backup recorded as failed with the reason (managed_service.updated), and is logged; one that
 * an operation is moving, or whose dump or restore is under way, is tried again at the next round.
 */
export async function queueNightlyDumps(deps: BackupDeps): Promise<string[]> {
  const now = deps.now();
  const queued: string[] = [];
  for (const candidate of await backupCandidates(deps.pool)) {
    if (!candidate.backups || !findProvider(deps.catalog, candidate.provider)?.capabilities.backups) continue;
    const failed = candidate.last_backup?.state === 'failed' ? new Date(candidate.last_backup.at) : null;
    if (!nightlyDue(now, candidate.created_at, candidate.last_nightly, failed)) continue;
    const done = await withTransaction(deps.pool, async (db) => {
      const row = await findManagedService(db, candidate.id);
      if (!row || movingStatuses.has(row.status) || row.status === 'paused') return false;
      const refusal = await dumpRefusal(deps, row, 'dump');
      if (refusal) {
        deps.host.log(`nightly dump of managed service ${candidate.id} not made: ${refusal.detail}`);
        await recordNightlyBackup(db, row.id, { state: 'failed', at: now.toISOString(), reason: refusal.detail ?? refusal.title });
        return false;
      }
      await enqueueDump(db, row, { id: randomUUID(), kind: 'nightly', by: null, at: now });
      return true;
    }).catch((error: unknown) => {
      if (error instanceof Problem) return false; // a dump or restore of it is under way: the next round tries again
      throw error;
    });
    if (done) queued.push(candidate.id);
  }
  return queued;
}

/**
 * Removes dump files that no row names (their managed service or workspace was purged), and `.partial` files a
 * dump left when its server died more than a day ago; then the emptied directories.
 */
export async function removeOrphanDumpFiles(deps: Pick<BackupDeps, 'pool' | 'host' | 'now'>): Promise<number> {
  const root = path.join(deps.host.dataDir, 'managed-dumps');
  const services = await readdir(root).catch(() => [] as string[]);
  if (services.length === 0) return 0;
  const known = await allManagedDumpIds(deps.pool);
  const staleBefore = deps.now().getTime() - DAY - HOUR;
  let removed = 0;
  for (const service of services) {
    const dir = path.join(root, service);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const id = name.replace(/\..*$/, '');
      const file = path.join(dir, name);
      const orphan = name.endsWith('.partial') ? ((await stat(file).catch(() => undefined))?.mtimeMs ?? 0) < staleBefore : !known.has(id);
      if (!orphan) continue;
      await rm(file, { force: true });
      removed++;
    }
    // Only when empty, and only of a purged service: a live one's dump may be about to write into it.
    if (!(await findManagedService(deps.pool, service).catch(() => undefined))) await rmdir(dir).catch(() => undefined);
  }
  return removed;
}

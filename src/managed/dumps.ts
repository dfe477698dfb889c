// Dumps and restores of managed services as durable operations (spec 2.4 `managed_service.dump`; restore as
// `managed_service.restore`). A dump job writes the engine's dump of the running instance to
// <data dir>/managed-dumps/<managed service id>/<dump id>.partial, renames it to <dump id><extension> once complete,
// then records it (migration 012); a nightly one also prunes the nightly dumps beyond the newest 7. A restore job
// loads a recorded dump into a running instance, replacing its data. Both are safe to run again after their server
// died: the dump id is fixed when it is queued, and a restore starts over from the dump. A nightly dump records its
// end on the managed service (`last_backup`, made or failed with the reason) and announces it by managed_service.updated,
// so that a failed backup is seen. docs/managed.md, "Dumps".
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { problem, Problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import { enqueueOperation } from '../operations/queue.ts';
import type { JobContext, OperationHandler } from '../operations/worker.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import { deleteManagedDump, findManagedDump, insertManagedDump, pruneNightlyDumps, type DumpKind, type ManagedDumpRow } from '../store/managed-dumps.ts';
import { findManagedService, setLastBackup, type LastBackup, type ManagedServiceRow } from '../store/managed-services.ts';
import { activeOperationOn, type OperationRow } from '../store/operations.ts';
import { findProvider, type Catalog } from './catalog.ts';
import { deployedInstanceRequest, type DeployedInstanceDeps } from './deployed-instance.ts';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { instancesOf, type InstancesDeps, type ManagedInstances } from './instances.ts';

/** Nightly dumps kept for each managed service (spec 2.8 `backups`). */
export const NIGHTLY_KEEP = 7;
export const DUMP_OPERATION = 'managed_service.dump';
export const RESTORE_OPERATION = 'managed_service.restore';

export interface DumpDeps extends DeployedInstanceDeps {
  host: ManagedHost;
  now: () => Date;
}

export const dumpsDir = (dataDir: string, managedServiceId: string) => path.join(dataDir, 'managed-dumps', managedServiceId);
export const dumpFile = (dataDir: string, dump: Pick<ManagedDumpRow, 'id' | 'managed_service_id' | 'extension'>) =>
  path.join(dumpsDir(dataDir, dump.managed_service_id), `${dump.id}${dump.extension}`);
const partialFile = (dataDir: string, managedServiceId: string, dumpId: string) => path.join(dumpsDir(dataDir, managedServiceId), `${dumpId}.partial`);
export const managedServiceTarget = (id: string) => `/managed-services/${id}`;

/** The name a download is saved under: the service's name and when the dump was made. */
export function downloadName(serviceName: string, dump: Pick<ManagedDumpRow, 'created_at' | 'extension'>): string {
  const at = dump.created_at.toISOString().replace(/\.\d{3}Z$/, 'Z').replaceAll(':', '-');
  return `${serviceName}-${at}${dump.extension}`;
}

/**
 * Why `row` cannot be dumped or restored now, as the problem a caller gets; undefined when it can: a deleted one
 * (409), a provider that makes no dumps (409 dump-not-supported), one this installation cannot dump (501), a paused
 * one (409 managed-service-paused: it stays paused, decisions.md), one not synchronized (409).
 */
export async function dumpRefusal(deps: { catalog: Catalog; host: ManagedHost; driver: InstancesDeps['driver'] }, row: ManagedServiceRow, action: 'dump' | 'restore'): Promise<Problem | undefined> {
  if (row.deleted_at) return problem('conflict', 409, `The managed service ${row.name} was deleted; a ${action} needs a live one.`);
  const capabilities = findProvider(deps.catalog, row.provider)?.capabilities;
  if (!capabilities?.dump) return problem('dump-not-supported', 409, `Managed ${row.provider} services make no dumps.`);
  const instances = instancesOf(deps, row.provider);
  if (!(action === 'dump' ? instances?.dump : instances?.restore)) {
    const where = instances ? ` on the ${deps.driver.name} runtime driver` : '';
    return problem('not-available', 501, `This installation cannot ${action} managed ${row.provider} services${where} yet.`);
  }
  const missing = await instances!.missingDumpTools?.();
  if (missing) return problem('not-available', 501, missing);
  if (row.status === 'paused' || row.status === 'pausing') {
    return problem('managed-service-paused', 409, `The managed service ${row.name} is paused (its landscape is torn down); Sync the landscape, then ${action} it.`);
  }
  if (row.status !== 'synchronized') return problem('conflict', 409, `The managed service ${row.name} is ${row.status}; a ${action} needs it running (synchronized).`);
  return undefined;
}

async function refuseBusy(db: Queryable, row: ManagedServiceRow): Promise<void> {
  const active = await activeOperationOn(db, managedServiceTarget(row.id));
  if (active) throw problem('conflict', 409, `A ${active.kind === RESTORE_OPERATION ? 'restore' : 'dump'} of ${row.name} is under way (operation ${active.id}); try again when it ends.`);
}

/** Queues a dump of `row` (the caller checked dumpRefusal); 409 while a dump or restore of it is under way. */
export async function enqueueDump(db: Queryable, row: ManagedServiceRow, dump: { id: string; kind: DumpKind; by: number | null; at: Date }): Promise<OperationRow> {
  await refuseBusy(db, row);
  return enqueueOperation(db, {
    kind: DUMP_OPERATION, target: managedServiceTarget(row.id), teamId: Number(row.team_id), createdBy: dump.by, at: dump.at,
    input: { managed_service_id: row.id, dump_id: dump.id, kind: dump.kind }, detail: `${dump.kind === 'nightly' ? 'Nightly dump' : 'Dump'} of ${row.name} queued`,
  });
}

/** Queues a restore of `dump` into `row`, replacing its data (the caller checked dumpRefusal and the dump's provider). */
export async function enqueueRestore(db: Queryable, row: ManagedServiceRow, dump: ManagedDumpRow, by: number, at: Date): Promise<OperationRow> {
  await refuseBusy(db, row);
  return enqueueOperation(db, {
    kind: RESTORE_OPERATION, target: managedServiceTarget(row.id), teamId: Number(row.team_id), createdBy: by, at,
    input: { managed_service_id: row.id, dump_id: dump.id }, detail: `Restore of ${row.name} from dump ${dump.id} queued`,
  });
}

/** The live managed service of a job, checked again when it runs (things changed since it was queued). */
async function jobInstance(deps: DumpDeps, id: string, action: 'dump' | 'restore'): Promise<{ row: ManagedServiceRow; instances: ManagedInstances }> {
  const row = await findManagedService(deps.pool, id);
  if (!row) throw problem('not-found', 404, 'The managed service does not exist any more.');
  const refusal = await dumpRefusal(deps, row, action);
  if (refusal) throw refusal;
  const instances = instancesOf(deps, row.provider)!;
  if (!(await instances.isRunning(row))) {
    throw problem('conflict', 409, `The managed service ${row.name} does not run now (its status says synchronized); Sync the landscape to start it again.`);
  }
  return { row, instances };
}

/** A failure of the provider's tools or server: the operation fails with its reason, not as an internal error. */
function providerFailure(what: string, error: unknown): never {
  if (error instanceof ManagedInstanceFailure) throw problem('unavailable', 503, `${what} failed: ${error.reason}`);
  throw error;
}

/** Records the last nightly backup of managed service `id` and announces it (managed_service.updated). */
export async function recordNightlyBackup(db: Queryable, id: string, backup: LastBackup): Promise<void> {
  const row = await setLastBackup(db, id, backup);
  if (row) await publishEvent(db, { type: 'managed_service.updated', at: backup.at, team_id: row.team_id, workspace_id: row.workspace_id, managed_service_id: row.id });
}

/** Why a nightly dump failed, as a team member may read it (an internal error's text stays in the log). */
const failureReason = (error: unknown) =>
  error instanceof Problem ? (error.detail ?? error.title) : 'an internal error of the server (its log and the operation name the incident)';

/** A dump; a nightly one records how it ended on its managed service (not when the server stops: it runs again). */
async function runDump(deps: DumpDeps, job: JobContext): Promise<string> {
  const { operation } = job;
  const input = operation.input as { managed_service_id: string; dump_id: string; kind: DumpKind };
  if (input.kind !== 'nightly') return makeDump(deps, operation);
  try {
    const detail = await makeDump(deps, operation);
    await recordNightlyBackup(deps.pool, input.managed_service_id, { state: 'succeeded', at: deps.now().toISOString(), operation_id: operation.id, dump_id: input.dump_id });
    return detail;
  } catch (error) {
    if (!job.signal.aborted) {
      const failed: LastBackup = { state: 'failed', at: deps.now().toISOString(), operation_id: operation.id, reason: failureReason(error) };
      await recordNightlyBackup(deps.pool, input.managed_service_id, failed);
      deps.host.log(`managed service ${input.managed_service_id}: nightly dump failed: ${failed.reason}`);
    }
    throw error;
  }
}

async function makeDump(deps: DumpDeps, operation: OperationRow): Promise<string> {
  const input = operation.input as { managed_service_id: string; dump_id: string; kind: DumpKind };
  const { row, instances } = await jobInstance(deps, input.managed_service_id, 'dump');
  const request = await deployedInstanceRequest(deps, row);
  const dir = dumpsDir(deps.host.dataDir, row.id);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const partial = partialFile(deps.host.dataDir, row.id, input.dump_id);
  try {
    const info = await instances.dump!(request, partial).catch((error: unknown) => providerFailure(`The dump of ${row.name}`, error));
    const dump: ManagedDumpRow = {
      id: input.dump_id, managed_service_id: row.id, team_id: Number(row.team_id), provider: row.provider, version: row.version, kind: input.kind,
      format: info.format, extension: info.extension, media_type: info.mediaType, size_bytes: (await stat(partial)).size,
      operation_id: operation.id, created_by: operation.created_by, created_at: deps.now(),
    };
    await rename(partial, dumpFile(deps.host.dataDir, dump));
    const pruned = await withTransaction(deps.pool, async (db) => {
      await insertManagedDump(db, dump);
      return dump.kind === 'nightly' ? pruneNightlyDumps(db, row.id, NIGHTLY_KEEP) : [];
    });
    for (const old of pruned) await rm(dumpFile(deps.host.dataDir, old), { force: true });
    deps.host.log(`managed service ${row.id} (${row.name}): ${dump.kind} dump ${dump.id} of ${dump.size_bytes} bytes`);
    return `Dump ready: ${dump.size_bytes} bytes, ${dump.format}; download it from /api/v1${managedServiceTarget(row.id)}/dumps/${dump.id}`;
  } finally {
    await rm(partial, { force: true });
  }
}

async function runRestore(deps: DumpDeps, operation: OperationRow): Promise<string> {
  const input = operation.input as { managed_service_id: string; dump_id: string };
  const { row, instances } = await jobInstance(deps, input.managed_service_id, 'restore');
  const dump = await findManagedDump(deps.pool, input.dump_id);
  if (!dump) throw problem('not-found', 404, 'The dump was deleted before it could be restored.');
  const file = dumpFile(deps.host.dataDir, dump);
  if (!(await stat(file).then(() => true, () => false))) throw problem('not-found', 404, `The file of dump ${dump.id} is gone.`);
  const request = await deployedInstanceRequest(deps, row);
  await instances.restore!(request, file).catch((error: unknown) => providerFailure(`The restore of ${row.name}`, error));
  return `Restored ${row.name} from dump ${dump.id} made ${dump.created_at.toISOString()}`;
}

export function dumpOperationHandlers(deps: DumpDeps): Record<string, OperationHandler> {
  return {
    [DUMP_OPERATION]: async (job) => ({ detail: await runDump(deps, job) }),
    [RESTORE_OPERATION]: async (job) => ({ detail: await runRestore(deps, job.operation) }),
  };
}

/** Deletes a dump: its row, then its file. */
export async function deleteDump(db: Queryable, dataDir: string, dump: ManagedDumpRow): Promise<void> {
  await deleteManagedDump(db, dump.id);
  await rm(dumpFile(dataDir, dump), { force: true });
}

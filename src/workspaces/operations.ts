// The long-running workspace actions as operation handlers. Each is safe to run again after its server died:
// it looks at where the workspace stands and finishes the job from there.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { DAY } from '../core/clock.ts';
import { problem } from '../core/problems.ts';
import type { JobContext, OperationHandler } from '../operations/worker.ts';
import { RuntimeFailure, type RuntimeDriver, type StopOptions, type VolumeOwnerResult, type WorkspaceRef } from '../runtime/driver.ts';
import { podUserOf } from '../runtime/workspace-user.ts';
import { withTransaction } from '../store/database.ts';
import { deleteWorkspaceRow, findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { publishEvent } from '../events/publish.ts';
import { statusTexts, type FailureStage } from './lifecycle.ts';
import { announceWorkspace, transitionWorkspace, type WorkspaceDeps } from './service.ts';
import type { ServiceRunner } from './service-runner.ts';
import type { PodGates } from './pod-gate.ts';
import type { StageRunner } from './stages.ts';
import { prepareAfterClone } from './automatic-prepare.ts';
import type { ImageSource, PreparedImage } from '../runtime/image.ts';
import { pinBaseImage, usesInstallationBaseImage } from './base-image.ts';
import { restartsFrom } from './editor-watch.ts';
import { PhaseTimeline } from '../core/phases.ts';
import { formatBytes } from '../operations/timeline-view.ts';
import type { CloneCredential } from '../git/credentials.ts';

export interface WorkspaceOperationDeps extends WorkspaceDeps {
  driver: RuntimeDriver;
  /** Runs the deployed landscape's replicas; started again whenever the editor pod starts. */
  services: Pick<ServiceRunner, 'apply' | 'settled'>;
  /** Aborts stage runs when the workspace stops. */
  stages: Pick<StageRunner, 'abortAll' | 'startPrepareIf' | 'ended'>;
  /** Where archives are kept: `<data dir>/archives`. */
  archiveDir: string;
  /** One change of a workspace's pods at a time in this server: wakes start them, sleeps and stops end them. */
  gates: PodGates;
  /** Deletes the workspace's managed-service instances and their data (at purge). */
  deleteManagedServices: (row: WorkspaceRow) => Promise<void>;
  /** Its managed-service instances through a volume owner change (src/managed/owner-change.ts); none: it has none. */
  managedOwner?: ManagedOwnerChange;
  /** Makes a workspace's `base_image` ready; without one, only the installation's base image runs. */
  images?: ImageSource;
  /** The creating user's credential for a repository's host, for the clone at create; absent: clones use none. */
  cloneCredential?: (userId: number | null, url: string) => Promise<CloneCredential | undefined>;
  /** Where each wake's phases go (`wake of workspace 3 took 812 ms: ...`; bench/workspaces reads them). */
  log?: (message: string) => void;
  /** Told of each wake (or start) that brought a workspace up, with its phases (metrics, src/metrics). */
  wakeEnded?: (timeline: PhaseTimeline, kind: WakeKind) => void;
  /** Once the editor pod runs: writes what its shells read of the managed services (managed-shell-file.ts). */
  editorStarted?: (row: WorkspaceRow) => Promise<void>;
}

/** Why a workspace was brought up: a wake (by hand or by a request), a start after a stop, its dead editor restarted. */
export type WakeKind = 'wake' | 'start' | 'editor-restart';

/** What a volume owner change does to the workspace's managed-service instances (spec 4.7). */
export interface ManagedOwnerChange {
  /** Ends their servers; those that ran are marked to start again with the workspace. */
  pause(row: WorkspaceRow): Promise<void>;
  /** Hands their data to `uid`; answers what could not be changed. */
  reown(row: WorkspaceRow, uid: number, signal?: AbortSignal): Promise<VolumeOwnerResult>;
  /** Starts the marked ones again (under the workspace's UID now); run when the workspace starts or wakes. */
  resume(row: WorkspaceRow): Promise<void>;
}

export const SOFT_DELETE_MS = 7 * DAY;

export function workspaceRef(row: WorkspaceRow): WorkspaceRef {
  const pin = row.base_image_pin;
  const baseImage = pin ? { image: pin.image, digest: pin.digest, rootfs: pin.rootfs, config: pin.config } : undefined;
  const egress = row.egress === 'off' || row.team_egress === 'off' ? 'off' : 'on';
  const user = podUserOf(row.owner_email, row.owner_name);
  return { id: row.id, teamId: row.team_id, restricted: row.restricted, egress, uid: row.uid, storageGib: row.storage_gib, plan: row.plan, name: row.name, user, ...(row.owner_dotfiles ? { dotfiles: row.owner_dotfiles } : {}), ...(baseImage ? { baseImage } : {}) };
}

/**
 * Ends every process of the workspace (stage runs aborted first, then the editor pod and every replica).
 * `sleeping`: it goes to sleep here and is woken here, so the driver keeps what the wake reuses (its networks).
 */
export async function stopWorkspaceProcesses(
  deps: Pick<WorkspaceOperationDeps, 'driver' | 'stages'>,
  row: WorkspaceRow,
  reason = 'The workspace went to sleep',
  options?: StopOptions,
): Promise<void> {
  await deps.stages.abortAll(row, reason);
  await deps.driver.stopWorkspace(workspaceRef(row), options);
}

export function archiveFile(deps: WorkspaceOperationDeps, id: number): string {
  return path.join(deps.archiveDir, `${id}.tar.gz`);
}

async function workspaceOf(deps: WorkspaceOperationDeps, job: JobContext): Promise<WorkspaceRow> {
  const row = await findWorkspace(deps.pool, Number(job.operation.input.workspace_id));
  if (!row) throw problem('not-found', 404, 'The workspace does not exist any more.');
  return row;
}

const failureStatus: Record<FailureStage, number> = { clone: 422, 'prepare-volume': 503, agent: 503, ide: 503 };

/** Runs driver work; a RuntimeFailure puts the workspace in Error with its reason and fails the operation. */
async function withRuntime<T>(deps: WorkspaceOperationDeps, id: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof RuntimeFailure)) throw error;
    const failed = await transitionWorkspace(deps, id, { type: 'failed', stage: error.stage, reason: error.reason });
    throw problem('workspace-failed', failureStatus[error.stage], failed.status_detail);
  }
}

/**
 * The longest the editor of a wake for a service's request stays in the background: a service that takes longer
 * (or never gets ready) does not hold the editor back beyond it.
 */
const SERVICES_FIRST_MS = 10_000;

/**
 * Starts the editor pod (on the base image pinned now, at its first start) and moves the workspace to Running. A
 * waking workspace's services start at the same time as its editor; they are stopped again when the editor fails.
 * `servicesFirst` (a wake for a request to a service, not to the editor): the editor pod runs in the background
 * until the services answer, so that their start gets the CPU; it is Running only once the editor answers, as ever.
 */
async function startEditor(deps: WorkspaceOperationDeps, job: JobContext, row: WorkspaceRow, timeline: PhaseTimeline, servicesFirst = false, editorRestart = false): Promise<void> {
  // an editor restarted after its death (editor-watch.ts) keeps its Error status until it answers (spec 3.1)
  const progress = editorRestart ? (text: string) => void job.progress(text).catch(() => undefined) : (text: string) => void reportProgress(deps, job, row.id, text);
  // The deployed landscape's services come back with the workspace; a service that cannot start shows its own
  // failure in the landscape and does not fail the workspace.
  const servicesStarted = (options?: { waking: boolean; timeline?: PhaseTimeline }) =>
    deps.services.apply(row.id, { ...options, record: timeline }).catch((error: Error) => void job.progress(`Running; services not all started: ${error.message}`).catch(() => undefined));
  // Instances a volume owner change paused start first (as the workspace's UID now), so its services find them.
  timeline.begin('managed instances', 'starting the managed-service instances paused with the workspace');
  await deps.managedOwner?.resume(row).catch((error: Error) => void job.progress(`Managed services not all resumed: ${error.message}`).catch(() => undefined));
  timeline.mark('managed instances');
  // the services' own timeline, from the same moment as the wake's (the wake was queued)
  const servicesTimeline = servicesFirst ? new PhaseTimeline(timeline.startedAt) : undefined;
  const early = row.state === 'waking_up' || row.state === 'sleeping' ? servicesStarted({ waking: true, timeline: servicesTimeline }) : undefined;
  const servicesAnswer = servicesTimeline && early
    ? servicesSettled(deps, row.id, early, servicesTimeline).catch((error: Error) => deps.log?.(`services of workspace ${row.id}: ${error.message}`))
    : undefined;
  try {
    timeline.begin('base image', baseImageWork(row));
    let fetched: PreparedImage['fetched'];
    let prepared = false;
    row = await withRuntime(deps, row.id, () => pinBaseImage(deps, row, (image) => ((prepared = true), (fetched = image.fetched))));
    timeline.mark('base image', undefined, baseImageDone(row, prepared, fetched));
    const editor = await withRuntime(deps, row.id, () => deps.driver.startEditor(workspaceRef(row), progress, timeline, { backgroundUntil: servicesAnswer }));
    const running = await transitionWorkspace(deps, row.id, { type: 'editor-ready' }, { editor_host: editor.host, editor_port: editor.port, ...podTemplateOf(deps, row, editor) });
    timeline.mark('running saved');
    void deps.editorStarted?.(running); // beside the services' start: nothing waits for it
  } catch (error) {
    if (early) await early.then(() => servicesStarted()); // the workspace does not run: its replicas stop
    throw error;
  }
  await (early ?? servicesStarted());
  timeline.mark('services started');
}

/**
 * Resolves once the woken services settled (ready, or failed), at most SERVICES_FIRST_MS after their replicas
 * started; their phases are logged on a line of their own beside the wake's (bench/workspaces reads both).
 */
async function servicesSettled(deps: WorkspaceOperationDeps, id: number, started: Promise<void>, timeline: PhaseTimeline): Promise<void> {
  await started;
  const settled = await deps.services.settled(id, SERVICES_FIRST_MS);
  timeline.mark(settled ? 'services ready' : 'services still starting');
  deps.log?.(`services of workspace ${id} ${settled ? 'answered' : 'still starting'} after ${timeline.text()}`);
}

/**
 * Which pod template the editor pod runs, and whether a start now would use a newer one (spec 2.3 `upgrade_pending`):
 * a pod found still running from before a platform upgrade keeps its old template until its next sleep or stop.
 */
export function podTemplateOf(deps: Pick<WorkspaceOperationDeps, 'driver'>, row: WorkspaceRow, editor: { template?: string }): Pick<WorkspaceRow, 'pod_template' | 'upgrade_pending'> {
  const current = deps.driver.podTemplate?.(workspaceRef(row));
  return { pod_template: editor.template ?? null, upgrade_pending: current !== undefined && editor.template !== current };
}

/** What the `base image` phase is about to do. */
function baseImageWork(row: WorkspaceRow): string {
  if (usesInstallationBaseImage(row.base_image)) return `the installation's base image (${row.base_image}): nothing to pull`;
  return row.base_image_pin ? `checking that ${row.base_image} is on this machine` : `pulling ${row.base_image}`;
}

/** What it did: a pull with its size, or none (the image was on this machine). */
function baseImageDone(row: WorkspaceRow, prepared: boolean, fetched: PreparedImage['fetched']): string {
  if (usesInstallationBaseImage(row.base_image)) return baseImageWork(row);
  if (!prepared) return `${row.base_image} was on this machine`;
  if (!fetched) return `${row.base_image}: every layer was in the image store`;
  return `pulling ${formatBytes(fetched.bytes)} of image layers (${fetched.layers}) of ${row.base_image}`;
}

async function reportProgress(deps: WorkspaceOperationDeps, job: JobContext, id: number, text: string): Promise<void> {
  try {
    await transitionWorkspace(deps, id, { type: 'progress', statusText: text });
    await job.progress(text);
  } catch {
    // a progress text that no longer fits (the workspace moved on) is not worth failing the job for
  }
}

/** The volume holds the clone now (a Retry no longer clones; the repository can no longer be changed). */
async function markSourceReady(deps: WorkspaceOperationDeps, id: number): Promise<WorkspaceRow> {
  return withTransaction(deps.pool, async (db) => {
    const saved = await updateWorkspace(db, id, { source_ready: true }, deps.clock.now());
    if (!saved) throw problem('not-found', 404, 'The workspace does not exist any more.');
    await announceWorkspace(db, 'workspace.updated', saved, deps.urls);
    return saved;
  });
}

/**
 * Makes the volume and fills it: the clone of its repository, or an empty volume prepared. `afresh`: what the volume
 * held goes first (a create resumed after its server died, a Retry of a failed clone).
 */
async function fillVolume(deps: WorkspaceOperationDeps, job: JobContext, row: WorkspaceRow, afresh: boolean, timeline: PhaseTimeline): Promise<WorkspaceRow> {
  const ref = workspaceRef(row);
  const progress = (text: string) => reportProgress(deps, job, row.id, text);
  if (afresh) {
    timeline.begin('earlier attempt removed', 'ending what an earlier attempt started and removing its volume');
    await stopWorkspaceProcesses(deps, row);
    await deps.driver.deleteVolume(ref);
    timeline.mark('earlier attempt removed');
  }
  timeline.begin('volume', `making the ${row.storage_gib} GiB volume`);
  await progress(statusTexts.configuringStorage);
  await withRuntime(deps, row.id, () => deps.driver.createVolume(ref));
  timeline.mark('volume');
  const repo = row.git_repo;
  if (repo) {
    timeline.begin('clone', `cloning ${repo}${row.git_ref ? ` at ${row.git_ref}` : ''}`);
    const credential = deps.cloneCredential ? await deps.cloneCredential(row.created_by, repo) : undefined;
    await withRuntime(deps, row.id, () => deps.driver.cloneRepository(ref, { url: repo, ref: row.git_ref ?? undefined, credential }, (t) => void progress(t)));
    const size = await deps.driver.volumeUsage(ref).then((usage) => ` (${formatBytes(usage.bytes)} on the volume)`, () => '');
    timeline.mark('clone', undefined, `cloned ${repo}${size}`);
  } else {
    timeline.begin('volume preparation', 'preparing the empty volume');
    await withRuntime(deps, row.id, () => deps.driver.prepareEmptyVolume(ref, (t) => void progress(t)));
    timeline.mark('volume preparation');
  }
  return markSourceReady(deps, row.id);
}

const createWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const timeline = job.timeline;
  const row = await fillVolume(deps, job, await workspaceOf(deps, job), job.resumed || job.operation.input.retry === true, timeline);
  await startEditor(deps, job, row, timeline);
  // prepare once after the clone (its run in Stages); the workspace runs meanwhile, and the creation ends with it,
  // so a Sync after the creation finds what prepare installed. A failure is named in the status text, never Error.
  timeline.begin('prepare', 'running prepare after the clone (see Stages)');
  const prepared = row.git_repo ? await prepareAfterClone(deps.stages, (await findWorkspace(deps.pool, row.id))!, (m) => deps.log?.(m)) : undefined;
  timeline.mark('prepare', undefined, prepared ? `prepare ran after the clone: ${prepared.state}` : 'no prepare steps to run');
  deps.log?.(`create of workspace ${row.id} took ${timeline.text()}`);
  if (prepared) return { detail: (await findWorkspace(deps.pool, row.id))?.status_detail ?? statusTexts.running };
  return { detail: statusTexts.running };
};

/**
 * Wakes (or starts) the workspace behind its pod gate: a sleep or stop asked before has ended every process and
 * saved its state, which this move starts from; one asked during the start is refused (pod-gate.ts). A wake that
 * finds the workspace stopped meanwhile fails as a wake of a stopped workspace does; only a start starts it.
 */
const wakeWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const id = Number(job.operation.input.workspace_id);
  const timeline = job.timeline;
  timeline.begin('pod gate', 'waiting for a sleep or stop of the workspace under way to end');
  return deps.gates.run(id, 'start', async () => {
    timeline.mark('pod gate');
    const row = await workspaceOf(deps, job);
    if (row.state === 'running') return { detail: statusTexts.running };
    const editorRestart = job.operation.input.editor_restart === true && restartsFrom(row);
    if (!editorRestart && row.state !== 'waking_up') await transitionWorkspace(deps, row.id, { type: job.operation.input.start === true ? 'start' : 'wake' });
    timeline.mark('waking up saved');
    // its clone failed (a wake by a request, a start after a stop): it clones again, never runs on an empty volume
    const filled = row.source_ready ? row : await fillVolume(deps, job, row, true, timeline);
    await startEditor(deps, job, filled, timeline, job.operation.input.services_first === true, editorRestart);
    deps.log?.(`wake of workspace ${row.id} took ${timeline.text()}`);
    deps.wakeEnded?.(timeline, editorRestart ? 'editor-restart' : job.operation.input.start === true ? 'start' : 'wake');
    return { detail: statusTexts.running };
  });
};

const softDeleteWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const row = await workspaceOf(deps, job);
  if (row.deleted_at) return { detail: 'Deleted; restorable for 7 days' };
  await stopWorkspaceProcesses(deps, row, 'The workspace was deleted');
  const now = deps.clock.nowMs();
  await transitionWorkspace(deps, row.id, { type: 'delete' }, { deleted_at: new Date(now), purge_after: new Date(now + SOFT_DELETE_MS), editor_host: null, editor_port: null }, 'workspace.deleted');
  return { detail: 'Deleted; restorable for 7 days' };
};

const restoreWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const row = await workspaceOf(deps, job);
  if (!row.deleted_at) return { detail: 'Restored' };
  try {
    await transitionWorkspace(deps, row.id, { type: 'restore' }, { deleted_at: null, purge_after: null }, 'workspace.restored');
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw problem('name-taken', 409, `Another workspace of the team is named "${row.name}"; rename it first.`);
    }
    throw error;
  }
  return { detail: 'Restored' };
};

const purgeWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const row = await findWorkspace(deps.pool, Number(job.operation.input.workspace_id));
  if (!row) return { detail: 'Purged' };
  await stopWorkspaceProcesses(deps, row, 'The workspace was purged');
  await deps.deleteManagedServices(row);
  await deps.driver.deleteVolume(workspaceRef(row));
  await rm(archiveFile(deps, row.id), { force: true });
  await withTransaction(deps.pool, async (db) => {
    await deleteWorkspaceRow(db, row.id);
    await publishEvent(db, { type: 'workspace.purged', at: deps.clock.now().toISOString(), team_id: row.team_id, workspace_id: row.id });
  });
  return { detail: 'Purged' };
};

const archiveWorkspace = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  let row = await workspaceOf(deps, job);
  if (row.state !== 'sleeping' && row.state !== 'stopped') {
    await stopWorkspaceProcesses(deps, row);
    row = await transitionWorkspace(deps, row.id, { type: 'sleep', reason: 'by-hand' }, { editor_host: null, editor_port: null });
  }
  await job.progress('Packing the volume');
  const packed = await deps.driver.archiveVolume(workspaceRef(row), archiveFile(deps, row.id));
  await transitionWorkspace(deps, row.id, { type: 'sleep', reason: (row.sleep_reason ?? 'by-hand') as 'by-hand' }, {
    last_archived_at: deps.clock.now(),
    archive_sha256: packed.sha256,
  });
  return { detail: `Archived (${packed.bytes} bytes)` };
};

const restoreArchive = (deps: WorkspaceOperationDeps): OperationHandler => async (job) => {
  const row = await workspaceOf(deps, job);
  if (!row.archive_sha256) throw problem('conflict', 409, 'The workspace has no archive to restore.');
  if (row.state !== 'sleeping' && row.state !== 'stopped') throw problem('conflict', 409, 'Put the workspace to sleep before restoring its archive.');
  await transitionWorkspace(deps, row.id, { type: 'sleep', reason: 'archive-restore' });
  await job.progress(statusTexts.restoringArchive);
  await deps.driver.restoreVolume(workspaceRef(row), archiveFile(deps, row.id));
  await transitionWorkspace(deps, row.id, { type: 'sleep', reason: 'archive-restored' }, { restored_from: row.id, archive_sha256: null });
  await rm(archiveFile(deps, row.id), { force: true });
  return { detail: 'Restored from the archive' };
};

export function workspaceOperationHandlers(deps: WorkspaceOperationDeps): Record<string, OperationHandler> {
  return {
    'workspace.create': createWorkspace(deps),
    'workspace.wake': wakeWorkspace(deps),
    'workspace.delete': softDeleteWorkspace(deps),
    'workspace.restore': restoreWorkspace(deps),
    'workspace.purge': purgeWorkspace(deps),
    'workspace.archive': archiveWorkspace(deps),
    'workspace.restore_archive': restoreArchive(deps),
  };
}

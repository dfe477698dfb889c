// The workspace side of a server: the runtime driver, the operation worker with the workspace handlers,
// reconciliation at start and the periodic chores.
import { lookup } from 'node:dns/promises';
import { managedCatalog } from '../managed/catalog.ts';
import { deleteManagedServices } from '../managed/lifecycle.ts';
import { checkManagedHealth, purgeExpiredManagedTombstones } from '../managed/health.ts';
import { manualActionHandlers } from '../managed/manual-actions.ts';
import { pauseForOwnerChange, reownManagedData, resumeWithWorkspace } from '../managed/owner-change.ts';
import { queueNightlyDumps, removeOrphanDumpFiles } from '../managed/backups.ts';
import { dumpOperationHandlers } from '../managed/dumps.ts';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import type { Clock } from '../core/clock.ts';
import type { ServerConfig } from '../core/config.ts';
import type { NotificationHub } from '../events/hub.ts';
import { RETENTION_MS } from '../operations/lifecycle.ts';
import { OperationWorker } from '../operations/worker.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { Cluster, loadKubeConfig } from '../runtime/kubernetes/cluster.ts';
import { createKubernetesDriver } from '../runtime/kubernetes/driver.ts';
import type { ImageSource } from '../runtime/image.ts';
import { openImageStore, RegistryImageSource, teamCredentialsForImage, type CollectResult } from '../images/index.ts';
import { pinnedImageDigests } from '../store/landscapes.ts';
import { hostCgroups } from '../runtime/local/cgroups.ts';
import { createLocalDriver, resolveVolumeBackend } from '../runtime/local/index.ts';
import type { Chore } from '../cluster/chores.ts';
import { createLocalWorkspaceFiles } from '../runtime/local/workspace-files.ts';
import type { WorkspaceFiles } from '../runtime/workspace-files.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { EditorWatch } from './editor-watch.ts';
import { LandscapeChecker } from './landscape-checker.ts';
import { LandscapeFileWatch } from './landscape-files.ts';
import { landscapeOperationHandlers } from './landscape-operations.ts';
import { notePrepareEnded } from './automatic-prepare.ts';
import { refreshManagedShellFile } from './managed-shell-file.ts';
import { withTransaction } from '../store/database.ts';
import { activeOperationOn, deleteFinishedOperations } from '../store/operations.ts';
import { findWorkspace, updateWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { announceWorkspace } from './service.ts';
import { purgeExpiredWorkspaces, sleepIdleWorkspaces } from './housekeeping.ts';
import { podTemplateOf, workspaceOperationHandlers, workspaceRef, type WorkspaceOperationDeps } from './operations.ts';
import { volumeOwnerHandlers } from './volume-owner.ts';
import { PodGates } from './pod-gate.ts';
import { ServiceRunner } from './service-runner.ts';
import { StageRunner } from './stages.ts';
import { sleepWorkspace } from './sleep.ts';
import { workspaceUrlsFromBase } from './view.ts';
import { cloneCredentialFor } from '../git/credentials.ts';

export interface WorkspaceRuntime {
  driver: RuntimeDriver;
  /** Container services' images: the image store under the data directory with the local driver by default. */
  images?: ImageSource;
  /** The image store's garbage collection (the minute chore; tests run it themselves), with the installation's store. */
  collectImages?: (options?: { graceMs?: number }) => Promise<CollectResult>;
  /** The image store, when this server pulls images itself (its use is a metric). */
  imageStore?: { usage(): Promise<number>; maxBytes: number };
  files: WorkspaceFiles;
  landscapeChecker: LandscapeChecker;
  worker: OperationWorker;
  deps: WorkspaceOperationDeps;
  services: ServiceRunner;
  stages: StageRunner;
  /** The managed-service chores (tests run them after moving the clock). */
  managed: ManagedChores;
  /** The periodic chores, for the server's scheduler (src/cluster/chores.ts: one server runs each per interval). */
  chores: Chore[];
  close(): Promise<void>;
}

export interface ManagedChores {
  /** Marks instances unknown or invalid-provider (and back); answers `id: status` of those that moved. */
  checkHealth(): Promise<string[]>;
  /** Purges tombstones older than 7 days; answers their ids. */
  purgeTombstones(): Promise<string[]>;
}

/**
 * Workspaces that claim to run without an operation on them, but whose pod is gone (the machine restarted):
 * they sleep, and the next open wakes them. Nothing stays "running" or "waking up" by mistake.
 */
async function reconcileWorkspaces(deps: WorkspaceOperationDeps, log: (m: string) => void): Promise<void> {
  const rows = await deps.pool.query<{ id: number }>(
    "SELECT id FROM workspaces WHERE state IN ('running', 'waking_up') AND deleted_at IS NULL",
  );
  for (const { id } of rows.rows) {
    const busy = await withTransaction(deps.pool, (db) => activeOperationOn(db, `/workspaces/${id}`));
    const row = await findWorkspace(deps.pool, id);
    if (busy || !row) continue;
    const observed = await deps.driver.editorState(workspaceRef(row));
    if (observed.state === 'ready') {
      await markUpgradePending(deps, row);
      continue;
    }
    await sleepWorkspace(deps, id, { type: 'sleep', reason: 'node-drained' });
    log(`workspace ${id} had no pod after the start; it sleeps until opened`);
  }
}

/**
 * After a platform upgrade (this server starts with another pod template than the one a running workspace's editor
 * pod was made from), the workspace shows `upgrade_pending` (workspace.updated) until its next sleep, stop or restart.
 */
async function markUpgradePending(deps: WorkspaceOperationDeps, row: WorkspaceRow): Promise<void> {
  const pending = podTemplateOf(deps, row, { template: row.pod_template ?? undefined }).upgrade_pending;
  if (pending === row.upgrade_pending) return;
  await withTransaction(deps.pool, async (db) => {
    const saved = await updateWorkspace(db, row.id, { upgrade_pending: pending }, deps.clock.now());
    if (saved) await announceWorkspace(db, 'workspace.updated', saved, deps.urls);
  });
}

/** The driver `--runtime` names: the local driver on the data directory, or the Kubernetes driver on its cluster. */
async function driverOf(config: ServerConfig, clock: Clock, log: (message: string) => void): Promise<RuntimeDriver> {
  if (config.runtime === 'kubernetes') {
    const cluster = new Cluster(loadKubeConfig());
    return createKubernetesDriver({ cluster, settings: config.kubernetes!, plans: config.plans, dataDir: config.dataDir, log });
  }
  const volumes = await resolveVolumeBackend(config.volumeBackend, process.getuid?.() === 0);
  log(volumes.backend === 'loop' ? "volumes: loop-mounted file systems of their size (writes past storage_gib fail)" : `volumes: directories, their size measured but not enforced: ${volumes.reason}`);
  return createLocalDriver({
    dataDir: config.dataDir, log, clock, editorTools: config.toolsDir, plans: config.plans, volumeBackend: volumes.backend,
    podDns: config.podDns, podAddressRange: config.podAddressRange, serviceAddressRange: config.serviceAddressRange, egressAllow: config.egressAllow, egressDeny: config.egressDeny, publishedAddresses: await publishedAddresses(config),
  });
}

/**
 * Where pods reach the installation itself (the console, workspaces' URLs): the base URL's host (its IPv4
 * addresses) on its port and on the TLS listener's, loopback left out (a pod's loopback is its own).
 */
async function publishedAddresses(config: ServerConfig): Promise<Array<{ address: string; port: number }>> {
  const url = new URL(config.baseUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const found = await lookup(url.hostname.replace(/^\[|\]$/g, ''), { all: true, family: 4 }).catch(() => []);
  const ports = [port, ...(config.tlsListen && config.tlsListen.port !== 0 ? [config.tlsListen.port] : [])];
  return found.filter((entry) => !entry.address.startsWith('127.')).flatMap((entry) => [...new Set(ports)].map((p) => ({ address: entry.address, port: p })));
}

/** The image store under the data directory, pulling with the team's registry credentials. */
async function openRegistryImages(pool: pg.Pool, config: ServerConfig, secrets: SecretBox, clock: Clock, log: (message: string) => void): Promise<RegistryImageSource> {
  return new RegistryImageSource({
    store: await openImageStore(config, () => new Date(clock.nowMs())),
    credentials: (teamId, image) => teamCredentialsForImage(pool, secrets, teamId, image),
    pinned: () => pinnedImageDigests(pool),
    nowMs: () => clock.nowMs(),
    log,
  });
}

export async function startWorkspaceRuntime(options: {
  pool: pg.Pool;
  clock: Clock;
  hub: NotificationHub;
  config: ServerConfig;
  log: (message: string) => void;
  secrets: SecretBox;
  driver?: RuntimeDriver;
  /** This server's id among those of the installation (src/cluster/presence.ts): it resumes its own jobs at once. */
  serverId: string;
  /** Ids of the servers alive, this one's included (stage runs of the others are theirs). */
  liveServerIds: () => Promise<string[]>;
  /** Images of services (Plan and Sync) and of workspaces' `base_image`; the image store on the data directory with the local driver when absent, none with false. */
  images?: ImageSource | false;
  /** Told of wakes and ended operations (src/metrics). */
  metrics?: { wakeEnded: NonNullable<WorkspaceOperationDeps['wakeEnded']>; operationEnded: NonNullable<ConstructorParameters<typeof OperationWorker>[0]['ended']> };
}): Promise<WorkspaceRuntime> {
  const { pool, clock, config, log } = options;
  const driver = options.driver ?? (await driverOf(config, clock, log));
  const registryImages = options.images === undefined && driver.name === 'local' ? await openRegistryImages(pool, config, options.secrets, clock, log) : undefined;
  const images = options.images === false ? undefined : (options.images ?? registryImages);
  const archiveDir = path.join(config.dataDir, 'archives');
  await mkdir(archiveDir, { recursive: true, mode: 0o700 });
  const files = driver.files ?? createLocalWorkspaceFiles({ dataDir: config.dataDir });
  const landscapeChecker = new LandscapeChecker({ budgetMs: config.landscapeCheckBudgetMs, managedDisabled: config.managedDisabled, plans: config.plans });
  landscapeChecker.warm(); // the first Plan after a start would otherwise wait most of a second for the worker to load
  const services = new ServiceRunner({ pool, driver, secrets: options.secrets, clock, log });
  const stages = new StageRunner({
    pool, driver, files, landscapeChecker, services, clock, log, serverId: options.serverId, liveServerIds: options.liveServerIds, hub: options.hub,
    onRunEnded: (row, run) => notePrepareEnded(deps, row, run),
  });
  const managed = {
    pool,
    driver,
    catalog: managedCatalog(config.managedDisabled, config.plans),
    // On the local runtime as root each instance runs in a cgroup of its own with its plan's CPU and memory limits.
    host: { dataDir: config.dataDir, toolsDir: config.toolsDir, log, cgroups: driver.name === 'local' ? hostCgroups(process.getuid?.() === 0) : undefined },
    now: () => clock.now(),
  };
  const deps: WorkspaceOperationDeps = {
    pool,
    clock,
    driver,
    services,
    stages,
    archiveDir,
    gates: new PodGates(pool),
    deleteManagedServices: (row) => deleteManagedServices(managed, row),
    managedOwner: {
      pause: (row) => pauseForOwnerChange(managed, row).then(() => undefined),
      reown: (row, uid, signal) => reownManagedData(managed, row, uid, signal),
      resume: (row) => resumeWithWorkspace(managed, options.secrets, row),
    },
    images,
    cloneCredential: (userId, url) => cloneCredentialFor(pool, options.secrets, userId, url),
    log,
    wakeEnded: options.metrics && ((timeline, kind) => options.metrics!.wakeEnded(timeline, kind)),
    editorStarted: (row) => refreshManagedShellFile({ pool, secrets: options.secrets, driver, log }, row, { newPod: true }),
    // The base URL may only be known after listening (port 0), so the addresses are computed when asked.
    get urls() {
      return workspaceUrlsFromBase(config.baseUrl, config.workspaceDomain);
    },
  };
  const dumps = { ...managed, secrets: options.secrets, get urls() { return deps.urls; } };
  const syncDeps = { stages, log, plans: config.plans, managed, images, pool, files, landscapeChecker, services, volumeUsage: (row: WorkspaceRow) => driver.volumeUsage(workspaceRef(row)), secrets: options.secrets, now: () => clock.now(), get urls() { return deps.urls; } };
  const worker = new OperationWorker({
    serverId: options.serverId,
    leaseMs: config.operationLeaseSeconds * 1000,
    pool,
    clock,
    hub: options.hub,
    handlers: {
      ...workspaceOperationHandlers(deps),
      ...volumeOwnerHandlers(deps),
      ...landscapeOperationHandlers(syncDeps),
      ...manualActionHandlers({ pool, secrets: options.secrets, managed }),
      ...dumpOperationHandlers(dumps),
    },
    log,
    ended: options.metrics && ((kind, outcome, seconds) => options.metrics!.operationEnded(kind, outcome, seconds)),
  });
  await stages.recover();
  await reconcileWorkspaces(deps, log);
  // a drained node's editor pod: the workspace sleeps (spec 3.1 "node drained"); one already moved on is left as it is
  const sleepDrained = async (id: number) => {
    await sleepWorkspace(deps, id, { type: 'sleep', reason: 'node-drained' }, {
      check: (row) => {
        if (row.state !== 'running' || row.deleted_at) throw new Error(`it is ${row.state} already`);
      },
      reason: 'its node was drained',
    });
  };
  const editors = new EditorWatch({ pool, clock, driver, log, sleepDrained, get urls() { return deps.urls; } });
  await editors.start();
  const managedChores: ManagedChores = { checkHealth: () => checkManagedHealth(managed), purgeTombstones: () => purgeExpiredManagedTombstones(managed) };
  // What the instances' statuses say after a restart of the machine (processes gone) or of --managed-disable.
  await managedChores.checkHealth().catch((error: Error) => log(`managed services health check: ${error.message}`));
  worker.start();
  services.startWatching();
  const landscapeFiles = new LandscapeFileWatch({ pool, driver, clock, log, watches: async () => (await options.liveServerIds())[0] === options.serverId });
  landscapeFiles.start();
  const workspaceChores = async () => {
    await stages.recover(); // runs of a server that died
    await sleepIdleWorkspaces(deps);
    await services.sleepIdle();
    await purgeExpiredWorkspaces(deps);
    await managedChores.checkHealth();
    await managedChores.purgeTombstones();
    await deleteFinishedOperations(pool, new Date(clock.nowMs() - RETENTION_MS));
    await queueNightlyDumps(managed);
    await removeOrphanDumpFiles(managed);
  };
  // Images no deployed landscape pins (and not pulled or used within the hour) go, apart from the other chores.
  const collectImages = async () => {
    const collected = await registryImages?.collect();
    if (collected && collected.removedImages.length > 0) log(`image store: removed ${collected.removedImages.length} unused image(s), ${Math.round(collected.freedBytes / 1048576)} MiB`);
  };
  const intervalMs = config.choreIntervalSeconds * 1000;
  const chores: Chore[] = [
    { name: 'workspaces', intervalMs, run: workspaceChores },
    { name: 'image-collection', intervalMs, run: collectImages },
  ];
  return {
    driver,
    images,
    collectImages: registryImages && ((collect) => registryImages.collect(collect)),
    imageStore: registryImages?.store,
    files,
    landscapeChecker,
    worker,
    deps,
    services,
    stages,
    managed: managedChores,
    chores,
    async close() {
      editors.close();
      landscapeFiles.close();
      services.close();
      await stages.close();
      await worker.close();
      await landscapeChecker.close();
      await driver.close();
    },
  };
}

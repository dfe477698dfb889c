// Reading a workspace's landscape now: the selected file (svc.yml or a profile), checked and normalized, the
// deployed record, the variables; the plan, templates filled in as Sync fills them; and the Sync that records a
// plan as deployed.
import type { InstallationPlans } from '../capacity/plans.ts';
import { workspaceDemand } from '../capacity/quota.ts';
import { refuseOverCapacity } from '../capacity/team-capacity.ts';
import type { PhaseTimeline } from '../core/phases.ts';
import type pg from 'pg';
import type { StageRunner } from './stages.ts';
import { problem, type Problem } from '../core/problems.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { publishEvent } from '../events/publish.ts';
import { withPlanImages, isProfileName, landscapeHash, landscapeProblem, profileFileName, servicesToRestart, type LandscapePlan, type NormalLandscape, type NormalManagedService } from '../landscape/index.ts';
import type { WorkspaceFiles } from '../runtime/workspace-files.ts';
import type { PlannedLandscape, PlanRequest, ProblemData } from './landscape-check.ts';
import type { LandscapeChecker } from './landscape-checker.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import { findDeployedLandscape, forgetServiceStatuses, saveDeployedLandscape, type DeployedLandscapeRow } from '../store/landscapes.ts';
import { liveManagedServices } from '../store/managed-services.ts';
import { findVaultId, listSecrets, listVariables } from '../store/variables.ts';
import { providerEngines } from '../managed/engines.ts';
import { managedUnavailable, runnableProvidersOn, type InstancesDeps } from '../managed/instances.ts';
import { generatedSecretsPurpose } from '../managed/generated-secrets.ts';
import { managedOf, syncManagedServices, type ManagedLifecycleDeps } from '../managed/lifecycle.ts';
import { managedSyncFailure } from '../managed/statuses.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { openDeployedValues, sealDeployedEnv, targetsOf, type ServiceRunner } from './service-runner.ts';
import { refuseOverDiskQuota, type VolumeUsageOf } from './disk-quota.ts';
import { pinImages, refuseContainersWithoutImages, refuseRunAsUser, refuseUnresolvedImages, resolveImages, servicesWithNewImages } from './container-images.ts';
import type { ImageSource } from '../runtime/image.ts';
import { variablesHash, type CurrentLandscape, type DeployedLandscape } from './landscape-state.ts';
import { workspaceAddresses, type WorkspaceUrls } from './view.ts';
import { formatBytes } from '../operations/timeline-view.ts';

export function checkProfile(profile: string | undefined): string | null {
  if (profile === undefined || profile === '') return null;
  if (!isProfileName(profile)) {
    throw problem('validation', 422, `"${profile}" is not a profile name.`, { errors: [{ pointer: '/profile', message: 'is not a profile name', in: 'query' }] });
  }
  return profile;
}

/** Where a workspace's landscape file is read from, and the worker pool that checks it off the event loop. */
export interface LandscapeSource {
  files: WorkspaceFiles;
  landscapeChecker: LandscapeChecker;
}

export interface CheckedLandscape extends CurrentLandscape {
  /** Errors beyond those listed. */
  omitted: number;
  /** Why the file was not checked (too large) or not to the end (too complex); its read state is then `unreadable`. */
  refused?: Problem;
  /** With a plan request and no error in the file: the filled-in landscape and the plan, or why it cannot be filled in. */
  planned?: PlannedLandscape;
}

/** Who asks for a check: the user (null: the server), and whether for a queued operation (check-queue.ts). */
export interface CheckAsker {
  user: number | null;
  operation?: boolean;
}

/**
 * Reads the selected file and checks it in a worker, in the turn of the workspace's team and the user who asks; with
 * a plan request, the worker also fills it in and plans.
 */
export async function readCurrentLandscape(source: LandscapeSource, row: WorkspaceRow, profile: string | null, by: CheckAsker, plan?: PlanRequest): Promise<CheckedLandscape> {
  const fileName = profileFileName(profile);
  const read = await source.files.readLandscapeFile({ id: row.id, teamId: row.team_id, uid: row.uid, storageGib: row.storage_gib }, fileName);
  if (read.state === 'unreadable' && read.limitBytes !== undefined) {
    return { fileName, read, errors: [], omitted: 0, refused: problem('landscape-too-large', 413, read.reason, { extra: { limit_bytes: read.limitBytes } }) };
  }
  if (read.state !== 'found') return { fileName, read, errors: [], omitted: 0 };
  const check = await source.landscapeChecker.check({ team: row.team_id, ...by }, { text: read.text, plan });
  if (check.state === 'too-complex') {
    const refused = tooComplexProblem(fileName, check.budgetMs);
    return { fileName, read: { state: 'unreadable', reason: refused.detail! }, errors: [], omitted: 0, refused };
  }
  return { fileName, read, errors: check.errors, omitted: check.omitted, normal: check.normal, planned: check.planned };
}

function tooComplexProblem(fileName: string, budgetMs: number): Problem {
  const detail = `${fileName} is too complex to check: checking it took more than ${budgetMs / 1000} s (or too much memory). Use fewer services, errors or aliases.`;
  return problem('landscape-too-complex', 422, detail, { extra: { budget_ms: budgetMs } });
}

/** The problem for a file that cannot be planned from: too complex, or with errors (the first ones listed). */
export function currentLandscapeProblem(current: CheckedLandscape): Problem {
  return current.refused ?? landscapeProblem(current.errors, { file: current.fileName, omitted: current.omitted });
}

export function deployedOf(row: DeployedLandscapeRow | undefined): DeployedLandscape | undefined {
  return row && { profile: row.profile, text: row.file_text, normal: row.normal, variablesHash: row.variables_hash, tornDown: row.torn_down };
}

export async function currentVariablesHash(db: Queryable, workspaceId: number): Promise<string> {
  const vaultId = await findVaultId(db, workspaceId);
  return variablesHash(await listVariables(db, workspaceId), vaultId === undefined ? [] : await listSecrets(db, vaultId));
}

/**
 * What planning needs beyond the database: the vault's key and the workspace's addresses (to fill in templates), and
 * what resolves container services' images to digests (none: they stay unresolved with a 501).
 */
export interface TemplateValues {
  secrets: SecretBox;
  urls: WorkspaceUrls;
  images?: Pick<ImageSource, 'resolve'>;
}

/**
 * The plan from the deployed landscape to the file as it is now, its templates filled in with the variables and
 * secrets of now: services whose environment changes are part of it. Problems for a missing or broken file, a
 * variable that is not set (422) and secrets without a value (409), each error placed in the file.
 */
export async function planFor(db: Queryable, source: LandscapeSource, row: WorkspaceRow, profile: string | null, values: TemplateValues, by: CheckAsker) {
  const vaultId = await findVaultId(db, row.id);
  const secrets = vaultId === undefined ? [] : await listSecrets(db, vaultId);
  const variables = await listVariables(db, row.id);
  const deployed = await findDeployedLandscape(db, row.id);
  const running = deployed && !deployed.torn_down ? deployed : undefined;
  const instances = await liveManagedServices(db, row.id);
  const deployedValues = running && openDeployedValues(values.secrets, running);
  const current = await readCurrentLandscape(source, row, profile, by, {
    managedVersions: Object.fromEntries(instances.map((instance) => [instance.name, instance.version])),
    previous: running?.normal ?? null,
    created: deployed?.normal ?? null,
    generatedSecretsSeed: values.secrets.derive(generatedSecretsPurpose(row.id)),
    before: deployedValues ? deployedValues.env : {},
    ...(deployedValues && { managedSecretsBefore: Object.fromEntries(Object.entries(deployedValues.managed ?? {}).map(([name, service]) => [name, service.secrets])) }),
    context: {
      workspace: { id: row.id, devDomain: new URL(workspaceAddresses(row.id, values.urls).dev).host },
      team: { id: row.team_id },
      env: Object.fromEntries(variables.map((v) => [v.name, v.value])),
      secrets: Object.fromEntries(secrets.map((s) => [s.name, values.secrets.open(s, `vault:${vaultId}:${s.name}`)])),
      services: {},
    },
  });
  if (current.refused) throw current.refused;
  if (current.read.state === 'missing') throw problem('conflict', 409, `There is no ${current.fileName} in /data/app to plan from.`);
  if (current.read.state === 'no-volume') throw problem('conflict', 409, 'The workspace has no volume now (archived?); restore it first.');
  if (current.read.state === 'unreadable') throw problem('conflict', 409, current.read.reason);
  if (!current.normal) throw currentLandscapeProblem(current);
  const planned = current.planned!;
  if (planned.problem) throw problemOf(planned.problem);
  await refuseRunAsUser(db, row.team_id, current.normal, current.read.text);
  const { filled, env } = planned;
  const images = await resolveImages(values.images, row.team_id, current.normal);
  const plan = withPlanImages(planned.plan, current.normal, running?.images ?? {}, images.resolved);
  const missingSecrets = planned.missingSecrets && problemOf(planned.missingSecrets);
  return { current, text: current.read.text, normal: current.normal, filled, env, plan, images, missingSecrets, variablesHash: variablesHash(variables, secrets) };
}

function problemOf({ name, status, detail, ...options }: ProblemData): Problem {
  return problem(name, status, detail, options);
}

/** Spec 2.8: a plan shows the secrets without a value, and a Sync of it is refused (409 missing-secrets) until they have one. */
export function refuseMissingSecrets(planned: { missingSecrets?: Problem }): void {
  if (planned.missingSecrets) throw planned.missingSecrets;
}

/** The plan's `missing_secrets`: each secret without a value and where the file uses it. */
export function missingSecretsOf(missing: Problem | undefined): Array<{ name: string; uses: Array<{ pointer: string; line?: number; column?: number }> }> | undefined {
  if (!missing) return undefined;
  return (missing.extra.secrets as string[]).map((name) => ({
    name,
    uses: (missing.errors ?? []).filter((error) => error.subject === name).map(({ pointer, line, column }) => ({ pointer, ...(line !== undefined && { line }), ...(column !== undefined && { column }) })),
  }));
}

function checkPlanHash(plan: LandscapePlan, planHash: string): void {
  if (plan.hash !== planHash) {
    throw problem('plan-changed', 409, 'The file or the deployed landscape changed since this plan was made; plan again.', { extra: { plan_hash: plan.hash } });
  }
}

/**
 * Providers whose instances this installation runs (src/managed/lifecycle.ts). A Sync that would create a managed
 * service of another provider is refused rather than deploying a landscape whose database silently does not exist.
 */
export const runnableProviders: ReadonlySet<string> = new Set(Object.keys(providerEngines));

/**
 * 501 not-available naming the managed services of `normal` that cannot run here: their provider has no engine, or
 * the runtime driver places no managed services at all. Checked before the file becomes the deployed landscape.
 */
export function refuseUnrunnableManaged(normal: NormalLandscape, driver: InstancesDeps['driver'], runnable: ReadonlySet<string> = runnableProvidersOn(driver)): void {
  const unavailable = managedUnavailable(driver);
  const names = Object.entries(normal.services).filter(([, s]) => s.type === 'managed' && (unavailable !== undefined || !runnable.has(s.provider))).map(([name]) => name);
  if (names.length === 0) return;
  const list = names.map((name) => `${name} (${(normal.services[name] as NormalManagedService).provider})`).join(', ');
  const why = unavailable ? unavailable.replace(/\.$/, '') : 'This installation runs no managed services of these providers';
  throw problem('not-available', 501, `${why}, so the landscape cannot be synced: ${list}. Remove them from the file to sync the rest.`, {
    extra: { managed_services: names },
  });
}

export interface SyncDeps extends LandscapeSource {
  pool: pg.Pool;
  /** The installation's plans: the team's quotas must hold the replicas the Sync asks for. */
  plans: InstallationPlans;
  /** How full the workspace's volume is: a Sync is refused while it is over its storage. */
  volumeUsage: VolumeUsageOf;
  services: ServiceRunner;
  secrets: SecretBox;
  urls: WorkspaceUrls;
  now: () => Date;
  managed: ManagedLifecycleDeps;
  /** Makes container services' images ready; without one, a Sync of a landscape with container services is refused (501). */
  images?: ImageSource;
  /** Where each Sync's phases go (`sync of workspace 3 took 812 ms: ...`; bench/images reads them). */
  log?: (message: string) => void;
  /** Runs prepare after a Sync when its steps changed (automatic-prepare.ts); none without it. */
  stages?: Pick<StageRunner, 'startPrepareIf' | 'ended'>;
}

/**
 * Sync: every secret the file uses must have a value (else 409 missing-secrets) and every variable be set (else
 * 422), the plan must still be the one reviewed (else 409 plan-changed), then the file becomes the deployed
 * landscape, the services the plan marks `restarts` start afresh, and landscape.updated is sent. Managed services are created or resumed (deleted when gone from the file) before
 * the other services start; one that does not end `synchronized` fails the Sync (503 managed-service-failed) once
 * the rest of the landscape runs. Container services' images are made ready at the digests the plan showed and pinned
 * first (501 without an image source; image-unavailable when one cannot be resolved or pulled, and nothing changes;
 * a container service whose digest moved restarts, as the plan said).
 */
export async function syncLandscape(
  deps: SyncDeps,
  row: WorkspaceRow,
  request: { profile: string | null; planHash: string; by: number | null },
  timeline?: PhaseTimeline,
): Promise<LandscapePlan> {
  // Images are fetched before the transaction (a pull may take minutes), at the digests the plan showed: their
  // resolutions are kept for the whole Sync, and the plan hash (which covers them) ties them to what is saved.
  const values = { ...deps, images: deps.images && onceEach(deps.images) };
  // The operation's checks wait their turn however many its user has pending: a 429 would fail the Sync.
  const by = { user: request.by, operation: true };
  const preview = await planFor(deps.pool, deps, row, request.profile, values, by);
  refuseMissingSecrets(preview);
  checkPlanHash(preview.plan, request.planHash);
  refuseUnrunnableManaged(preview.normal, deps.managed.driver);
  refuseContainersWithoutImages(preview.normal, deps.images);
  refuseUnresolvedImages(preview.normal, preview.images);
  timeline?.mark('plan');
  // The replicas' network namespaces are made while the images are pulled; what no start takes goes afterwards.
  const prepared = deps.services.prepare(row, preview.normal);
  try {
    return await syncPrepared(deps, values, row, request, preview, timeline);
  } finally {
    await (await prepared)?.release().catch((error: Error) => deps.log?.(`releasing the replicas prepared for workspace ${row.id} failed: ${error.message}`));
  }
}

/** The Sync once its plan was checked: images, volume size, the transaction, managed services, the replicas. */
async function syncPrepared(
  deps: SyncDeps,
  values: TemplateValues,
  row: WorkspaceRow,
  request: { profile: string | null; planHash: string; by: number | null },
  preview: Awaited<ReturnType<typeof planFor>>,
  timeline?: PhaseTimeline,
): Promise<LandscapePlan> {
  // The volume is measured (a `du`) while the images are pulled; a volume over its storage fails the Sync at once.
  timeline?.begin('images and volume size', `making ${serviceCount(preview.normal, 'container')} container image(s) ready and measuring the volume`);
  const diskChecked = refuseOverDiskQuota(deps.volumeUsage, row, 'a Sync');
  diskChecked.catch(() => undefined); // awaited below
  const pulled = { bytes: 0, layers: 0 };
  const count = (bytes: number, layers: number) => ((pulled.bytes += bytes), (pulled.layers += layers));
  const [images] = await Promise.all([deps.images ? pinImages(deps.images, row, preview.normal, preview.images, count) : {}, diskChecked]);
  const ready = Object.keys(images).length;
  timeline?.mark('images and volume size', undefined, ready === 0 ? 'no image to make ready; the volume measured'
    : pulled.layers > 0 ? `pulling ${formatBytes(pulled.bytes)} of image layers (${pulled.layers}) for ${ready} service(s); the volume measured`
    : `${ready} service(s)' images were on this machine; the volume measured`);
  timeline?.begin('save', 'saving the deployed landscape');
  const { plan, restart, filled } = await withTransaction(deps.pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`landscape:${row.id}`]);
    const planned = await planFor(db, deps, row, request.profile, values, { user: request.by, operation: true });
    refuseMissingSecrets(planned);
    const { text, normal, filled, env, plan, variablesHash } = planned;
    checkPlanHash(plan, request.planHash);
    refuseUnrunnableManaged(normal, deps.managed.driver);
    // the team's CPU and memory quotas must hold the workspace with the new landscape's replicas
    if (!['sleeping', 'stopped'].includes(row.state)) await refuseOverCapacity(db, deps.plans, row.team_id, workspaceDemand(deps.plans, { id: row.id, plan: row.plan, landscape: normal }), 'The workspace with this landscape', row.id);
    const before = await findDeployedLandscape(db, row.id);
    const at = deps.now();
    await saveDeployedLandscape(db, {
      workspaceId: row.id,
      profile: request.profile,
      text,
      normal,
      hash: landscapeHash(normal),
      variablesHash,
      env: sealDeployedEnv(deps.secrets, row.id, { env, targets: targetsOf(filled), managed: Object.fromEntries(managedOf(filled)) }),
      images,
      by: request.by,
      at,
    });
    await forgetServiceStatuses(db, row.id);
    await publishEvent(db, { type: 'landscape.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.id });
    return { plan, restart: [...servicesToRestart(plan), ...servicesWithNewImages(before?.images ?? {}, images)], filled };
  });
  timeline?.mark('save');
  timeline?.begin('managed services', `creating or resuming ${serviceCount(preview.normal, 'managed')} managed-service instance(s)`);
  // The instances run before the services that use them start; those that do not serve fail the Sync once the
  // rest of the landscape runs.
  const instances = await syncManagedServices(deps.managed, row, filled, new Set(restart));
  timeline?.mark('managed services');
  const names = [...plan.unchanged, ...plan.services.map((s) => s.name)];
  timeline?.begin('services started', 'starting the services\' replicas');
  await deps.services.apply(row.id, { restart, retry: names, timeline, record: timeline });
  timeline?.mark('services started');
  const failure = managedSyncFailure(instances);
  if (failure) throw failure;
  return plan;
}

/** Each reference resolved once for the whole Sync: its two plans see the same digests. */
function onceEach(images: Pick<ImageSource, 'resolve'>): Pick<ImageSource, 'resolve'> {
  const answers = new Map<string, Promise<{ digest: string }>>();
  return {
    resolve(lookup) {
      let answer = answers.get(lookup.image);
      if (!answer) answers.set(lookup.image, (answer = images.resolve(lookup)));
      return answer;
    },
  };
}

/** How many services of `type` the landscape has (a Sync's timeline says what its phases do). */
function serviceCount(landscape: NormalLandscape, type: NormalLandscape['services'][string]['type']): number {
  return Object.values(landscape.services).filter((service) => service.type === type).length;
}

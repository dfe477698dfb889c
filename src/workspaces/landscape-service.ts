// Reading a workspace's landscape now: the selected file (svc.yml or a profile), checked and normalized, the
// deployed record, the variables; and the Sync that records a plan as deployed.
import type pg from 'pg';
import { problem, type Problem } from '../core/problems.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { publishEvent } from '../events/publish.ts';
import {
  fillTemplates,
  isProfileName,
  landscapeHash,
  landscapeProblem,
  profileFileName,
  type LandscapePlan,
  type NormalLandscape,
} from '../landscape/index.ts';
import type { WorkspaceFiles } from '../runtime/workspace-files.ts';
import type { LandscapeChecker } from './landscape-checker.ts';
import { withTransaction, type Queryable } from '../store/database.ts';
import { findDeployedLandscape, saveDeployedLandscape, type DeployedLandscapeRow } from '../store/landscapes.ts';
import { findVaultId, listSecrets, listVariables } from '../store/variables.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { envOf, openDeployedEnv, sealDeployedEnv, servicesToRestart, targetsOf, type ServiceRunner } from './service-runner.ts';
import { refuseOverDiskQuota, type VolumeUsageOf } from './disk-quota.ts';
import { variablesHash, type CurrentLandscape, type DeployedLandscape } from './landscape-state.ts';
import { workspaceAddresses, type WorkspaceUrls } from './view.ts';

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
  /** The plan from `previous`, when readCurrentLandscape was given one and the file has no error. */
  plan?: LandscapePlan;
}

/** Reads the selected file and checks it in a worker; with `previous`, the worker also plans from it. */
export async function readCurrentLandscape(source: LandscapeSource, row: WorkspaceRow, profile: string | null, previous?: NormalLandscape | null): Promise<CheckedLandscape> {
  const fileName = profileFileName(profile);
  const read = await source.files.readLandscapeFile({ id: row.id, uid: row.uid, storageGib: row.storage_gib }, fileName);
  if (read.state === 'unreadable' && read.limitBytes !== undefined) {
    return { fileName, read, errors: [], omitted: 0, refused: problem('landscape-too-large', 413, read.reason, { extra: { limit_bytes: read.limitBytes } }) };
  }
  if (read.state !== 'found') return { fileName, read, errors: [], omitted: 0 };
  const check = await source.landscapeChecker.check({ text: read.text, previous });
  if (check.state === 'too-complex') {
    const refused = tooComplexProblem(fileName, check.budgetMs);
    return { fileName, read: { state: 'unreadable', reason: refused.detail! }, errors: [], omitted: 0, refused };
  }
  return { fileName, read, errors: check.errors, omitted: check.omitted, normal: check.normal, plan: check.plan };
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

/** The plan from the deployed landscape to the file as it is now; problems for a missing or broken file. */
export async function planFor(db: Queryable, source: LandscapeSource, row: WorkspaceRow, profile: string | null) {
  const deployed = await findDeployedLandscape(db, row.id);
  const previous = deployed && !deployed.torn_down ? deployed.normal : null;
  const current = await readCurrentLandscape(source, row, profile, previous);
  if (current.refused) throw current.refused;
  if (current.read.state === 'missing') throw problem('conflict', 409, `There is no ${current.fileName} in /data/app to plan from.`);
  if (current.read.state === 'no-volume') throw problem('conflict', 409, 'The workspace has no volume now (archived?); restore it first.');
  if (current.read.state === 'unreadable') throw problem('conflict', 409, current.read.reason);
  if (!current.normal || !current.plan) throw currentLandscapeProblem(current);
  return { current, text: current.read.text, normal: current.normal, plan: current.plan };
}

export interface SyncDeps extends LandscapeSource {
  pool: pg.Pool;
  /** How full the workspace's volume is: a Sync is refused while it is over its storage. */
  volumeUsage: VolumeUsageOf;
  services: ServiceRunner;
  secrets: SecretBox;
  urls: WorkspaceUrls;
  now: () => Date;
}

/**
 * Sync: the plan must still be the one reviewed (else 409 plan-changed), every secret the file uses must have a
 * value (else 409 missing-secrets), then the file becomes the deployed landscape and landscape.updated is sent.
 */
export async function syncLandscape(
  deps: SyncDeps,
  row: WorkspaceRow,
  request: { profile: string | null; planHash: string; by: number | null },
): Promise<LandscapePlan> {
  const { plan, restart } = await withTransaction(deps.pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`landscape:${row.id}`]);
    const { text, normal, plan } = await planFor(db, deps, row, request.profile);
    if (plan.hash !== request.planHash) {
      throw problem('plan-changed', 409, 'The file or the deployed landscape changed since this plan was made; plan again.', { extra: { plan_hash: plan.hash } });
    }
    await refuseOverDiskQuota(deps.volumeUsage, row, 'a Sync');
    const vaultId = await findVaultId(db, row.id);
    const secrets = vaultId === undefined ? [] : await listSecrets(db, vaultId);
    const variables = await listVariables(db, row.id);
    const filled = fillTemplates(normal, {
      workspace: { id: row.id, devDomain: new URL(workspaceAddresses(row.id, deps.urls).dev).host },
      team: { id: row.team_id },
      env: Object.fromEntries(variables.map((v) => [v.name, v.value])),
      secrets: Object.fromEntries(secrets.map((s) => [s.name, deps.secrets.open(s, `vault:${vaultId}:${s.name}`)])),
      services: {},
    });
    if (filled.problem) throw filled.problem;
    const at = deps.now();
    const before = await findDeployedLandscape(db, row.id);
    const env = envOf(filled.landscape!);
    const restart = servicesToRestart(plan, before && !before.torn_down ? openDeployedEnv(deps.secrets, before) : {}, env);
    await saveDeployedLandscape(db, {
      workspaceId: row.id,
      profile: request.profile,
      text,
      normal,
      hash: landscapeHash(normal),
      variablesHash: variablesHash(variables, secrets),
      env: sealDeployedEnv(deps.secrets, row.id, { env, targets: targetsOf(filled.landscape!) }),
      by: request.by,
      at,
    });
    await publishEvent(db, { type: 'landscape.updated', at: at.toISOString(), team_id: row.team_id, workspace_id: row.id });
    return { plan, restart };
  });
  const names = [...plan.unchanged, ...plan.services.map((s) => s.name)];
  await deps.services.apply(row.id, { restart, retry: names });
  return plan;
}

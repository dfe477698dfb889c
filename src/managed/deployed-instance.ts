// A live managed service as its engine sees it outside a Sync (for a dump or a restore): its entry as the last Sync
// filled it in and gave it to the instance (sealed with the deployed landscape: the password the instance runs with,
// generated or from the vault of then), at the place the driver gave it on the service network. A deployment from
// before Syncs kept that fills the deployed entry in again from the vault of now, generated secrets included, as
// Sync does (landscape-check.ts). Sync builds the same request from the file (lifecycle.ts).
import type pg from 'pg';
import { problem } from '../core/problems.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { fillTemplates, type NormalManagedService } from '../landscape/index.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { findDeployedLandscape, type DeployedLandscapeRow } from '../store/landscapes.ts';
import type { ManagedServiceRow } from '../store/managed-services.ts';
import { findVaultId, listSecrets, listVariables } from '../store/variables.ts';
import { findWorkspace, type WorkspaceRow } from '../store/workspaces.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import { openDeployedValues } from '../workspaces/service-runner.ts';
import { workspaceAddresses, type WorkspaceUrls } from '../workspaces/view.ts';
import type { Catalog } from './catalog.ts';
import type { InstanceRequest } from './engine.ts';
import { generatedSecretsPurpose, withGeneratedSecrets } from './generated-secrets.ts';
import { managedUnavailable, placedRequest } from './instances.ts';
import { effectivePlan } from './lifecycle.ts';

export interface DeployedInstanceDeps {
  pool: pg.Pool;
  driver: RuntimeDriver;
  catalog: Catalog;
  secrets: SecretBox;
  urls: WorkspaceUrls;
}

/** The request of live managed service `row`; 409 when its landscape no longer deploys it or a secret has no value. */
export async function deployedInstanceRequest(deps: DeployedInstanceDeps, row: ManagedServiceRow): Promise<InstanceRequest> {
  const workspace = await findWorkspace(deps.pool, Number(row.workspace_id));
  if (!workspace) throw problem('not-found', 404, 'The workspace of this managed service does not exist any more.');
  const deployed = await findDeployedLandscape(deps.pool, workspace.id);
  const entry = deployed?.normal.services[row.name];
  if (!deployed || entry?.type !== 'managed' || entry.provider !== row.provider) {
    throw problem('conflict', 409, `The deployed landscape has no managed ${row.provider} service ${row.name} any more; sync the landscape first.`);
  }
  const service = openDeployedValues(deps.secrets, deployed).managed?.[row.name] ?? (await refilledService(deps, workspace, deployed, row.name));
  const unavailable = managedUnavailable(deps.driver);
  if (unavailable) throw problem('not-available', 501, unavailable);
  return placedRequest(deps.driver, workspaceRef(workspace), {
    id: row.number, name: row.name, service, version: row.version, uid: workspace.uid,
    plan: effectivePlan(deps.catalog, row.provider, row.plan, service.resources),
  });
}

/** The deployed entry `name` filled in with the variables and vault of now, and the secrets svc generates. */
async function refilledService(deps: DeployedInstanceDeps, workspace: WorkspaceRow, deployed: DeployedLandscapeRow, name: string): Promise<NormalManagedService> {
  const entry = deployed.normal.services[name];
  const vaultId = await findVaultId(deps.pool, workspace.id);
  const secrets = vaultId === undefined ? [] : await listSecrets(deps.pool, vaultId);
  const variables = await listVariables(deps.pool, workspace.id);
  const filled = fillTemplates({ ...deployed.normal, services: { [name]: entry } }, {
    workspace: { id: workspace.id, devDomain: new URL(workspaceAddresses(workspace.id, deps.urls).dev).host },
    team: { id: workspace.team_id },
    env: Object.fromEntries(variables.map((v) => [v.name, v.value])),
    secrets: Object.fromEntries(secrets.map((s) => [s.name, deps.secrets.open(s, `vault:${vaultId}:${s.name}`)])),
    services: {},
  });
  if (filled.problem) throw filled.problem;
  const landscape = withGeneratedSecrets(filled.landscape!, deps.catalog, deps.secrets.derive(generatedSecretsPurpose(workspace.id)));
  return landscape.services[name] as NormalManagedService;
}

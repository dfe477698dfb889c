// A live managed service as its engine sees it outside a Sync (for a dump or a restore): its entry in the deployed
// landscape with the templates and `secrets` filled in from the workspace's variables and vault of now, at the place
// the driver gave it on the service network. Sync builds the same request from the file (lifecycle.ts).
import type pg from 'pg';
import { problem } from '../core/problems.ts';
import type { SecretBox } from '../core/secret-box.ts';
import { fillTemplates, type NormalManagedService } from '../landscape/index.ts';
import type { RuntimeDriver } from '../runtime/driver.ts';
import { findDeployedLandscape } from '../store/landscapes.ts';
import type { ManagedServiceRow } from '../store/managed-services.ts';
import { findVaultId, listSecrets, listVariables } from '../store/variables.ts';
import { findWorkspace } from '../store/workspaces.ts';
import { workspaceRef } from '../workspaces/operations.ts';
import { workspaceAddresses, type WorkspaceUrls } from '../workspaces/view.ts';
import type { Catalog } from './catalog.ts';
import type { InstanceRequest } from './engine.ts';
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
  const vaultId = await findVaultId(deps.pool, workspace.id);
  const secrets = vaultId === undefined ? [] : await listSecrets(deps.pool, vaultId);
  const variables = await listVariables(deps.pool, workspace.id);
  const filled = fillTemplates({ ...deployed.normal, services: { [row.name]: entry } }, {
    workspace: { id: workspace.id, devDomain: new URL(workspaceAddresses(workspace.id, deps.urls).dev).host },
    team: { id: workspace.team_id },
    env: Object.fromEntries(variables.map((v) => [v.name, v.value])),
    secrets: Object.fromEntries(secrets.map((s) => [s.name, deps.secrets.open(s, `vault:${vaultId}:${s.name}`)])),
    services: {},
  });
  if (filled.problem) throw filled.problem;
  const service = filled.landscape!.services[row.name] as NormalManagedService;
  if (!deps.driver.placeManagedService) throw problem('not-available', 501, `The runtime driver ${deps.driver.name} runs no managed services.`);
  const place = await deps.driver.placeManagedService(workspaceRef(workspace), row.name);
  return {
    id: row.number, name: row.name, service, version: row.version, uid: workspace.uid, netns: place.netns, address: place.address,
    plan: effectivePlan(deps.catalog, row.provider, row.plan, service.resources),
  };
}

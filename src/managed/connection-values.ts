// The connection values of a workspace's managed services as its last Sync gave them to the instances (sealed with
// the deployed landscape: the password each instance runs with). Read at each shell's start and at a reveal, so
// both follow the latest Sync. A landscape torn down (its instances paused) or never synced has none.
import type pg from 'pg';
import type { SecretBox } from '../core/secret-box.ts';
import { findDeployedLandscape } from '../store/landscapes.ts';
import { liveManagedServices } from '../store/managed-services.ts';
import { openDeployedValues } from '../workspaces/service-runner.ts';
import { managedConnectionEnv, type ManagedConnection } from './connection-env.ts';
import { providerValues } from './service-values.ts';

/**
 * The deployed managed services of workspace `workspaceId` with their filled connection values, oldest instance
 * first (so a Sync that adds one never moves `DATABASE_URL` away from the one it named), then new ones by name.
 */
export async function deployedManagedConnections(pool: pg.Pool, secrets: SecretBox, workspaceId: number, options: { tornDown?: boolean } = {}): Promise<ManagedConnection[]> {
  const deployed = await findDeployedLandscape(pool, workspaceId);
  if (!deployed || (deployed.torn_down && !options.tornDown)) return [];
  const managed = openDeployedValues(secrets, deployed).managed ?? {};
  const connections: ManagedConnection[] = [];
  for (const [name, service] of Object.entries(managed)) {
    if (!Object.hasOwn(providerValues, service.provider)) continue;
    const version = String(service.providerVersion ?? '');
    connections.push({ name, provider: service.provider, values: providerValues[service.provider](name, service, version) });
  }
  const created = new Map((await liveManagedServices(pool, workspaceId)).map((row) => [row.name, row.number]));
  const order = (name: string) => created.get(name) ?? Number.MAX_SAFE_INTEGER;
  return connections.sort((a, b) => order(a.name) - order(b.name) || a.name.localeCompare(b.name));
}

/** The variables of every shell of the workspace (connection-env.ts). */
export async function managedShellEnv(pool: pg.Pool, secrets: SecretBox, workspaceId: number): Promise<Record<string, string>> {
  return managedConnectionEnv(await deployedManagedConnections(pool, secrets, workspaceId));
}

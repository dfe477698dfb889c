// The workspace's `dev_service` (spec 2.3) as GET /workspaces/{ws} shows it: the deployed landscape's service that
// serves `/` on the dev URL, its live status, its needs, and how long waking it takes.
import type pg from 'pg';
import { findDeployedLandscape } from '../store/landscapes.ts';
import { lastSucceededSeconds } from '../store/operations.ts';
import type { WorkspaceRow } from '../store/workspaces.ts';
import { devService, type DevService } from './deployment.ts';
import type { ServiceRunner } from './service-runner.ts';

/** Until a workspace was woken once: an editor pod and a small service on the local runtime (docs/decisions.md). */
export const ESTIMATED_WAKE_SECONDS = 10;

/** Its last wake (or start) as measured, rounded up to whole seconds, else the estimate. */
export function wakeSeconds(measured: number | undefined): number {
  return measured === undefined ? ESTIMATED_WAKE_SECONDS : Math.max(1, Math.ceil(measured));
}

export async function readDevService(deps: { pool: pg.Pool; services: Pick<ServiceRunner, 'views'> }, row: WorkspaceRow): Promise<DevService | undefined> {
  const deployed = await findDeployedLandscape(deps.pool, row.id);
  if (!deployed) return undefined;
  const [views, measured] = await Promise.all([deps.services.views(row, deployed), lastSucceededSeconds(deps.pool, `/workspaces/${row.id}`, 'workspace.wake')]);
  return devService(deployed.normal, deployed.torn_down, views, wakeSeconds(measured));
}

// Sync and Teardown as operation handlers (landscape.sync, landscape.teardown).
import type { OperationHandler } from '../operations/worker.ts';
import { problem } from '../core/problems.ts';
import { publishEvent } from '../events/publish.ts';
import { withTransaction } from '../store/database.ts';
import { markTornDown } from '../store/landscapes.ts';
import { findWorkspace } from '../store/workspaces.ts';
import { pauseManagedServices } from '../managed/lifecycle.ts';
import { syncLandscape, type SyncDeps } from './landscape-service.ts';
import { prepareAtSync } from './automatic-prepare.ts';
import { refreshManagedShellFile } from './managed-shell-file.ts';

export function landscapeOperationHandlers(deps: SyncDeps): Record<string, OperationHandler> {
  return {
    'landscape.sync': async (job) => {
      const input = job.operation.input as { workspace_id: number; profile: string | null; plan_hash: string };
      const row = await findWorkspace(deps.pool, input.workspace_id);
      if (!row || row.deleted_at) throw problem('not-found', 404, 'The workspace does not exist any more.');
      const timeline = job.timeline;
      // prepare first when its steps changed (automatic-prepare.ts), so the services start with what it installs
      timeline.begin('prepare', 'running prepare again: its steps changed (see Stages)');
      const prepared = deps.stages ? await prepareAtSync({ pool: deps.pool, stages: deps.stages }, row, input.profile, job.operation.created_by, (m) => deps.log?.(m)) : undefined;
      timeline.mark('prepare', undefined, prepared ? `prepare ran again (its steps changed): ${prepared.state}` : 'prepare unchanged: not run');
      timeline.begin('plan', 'checking the plan again');
      const plan = await syncLandscape(deps, row, { profile: input.profile, planHash: input.plan_hash, by: job.operation.created_by }, timeline);
      deps.log?.(`sync of workspace ${row.id} took ${timeline.text()}`);
      timeline.begin('shell file', 'writing what shells read of the managed services');
      await refreshManagedShellFile({ ...deps, driver: deps.managed.driver }, (await findWorkspace(deps.pool, row.id)) ?? row);
      timeline.mark('shell file');
      const changes = plan.services.length;
      if (prepared) return { detail: `${changes === 0 ? 'Synced; no service changed' : `Synced; ${changes} service(s) changed`}; prepare ran first (see Stages)` };
      return { detail: changes === 0 ? 'Synced; no service changed' : `Synced; ${changes} service(s) changed` };
    },
    'landscape.teardown': async (job) => {
      const id = Number(job.operation.input.workspace_id);
      const row = await findWorkspace(deps.pool, id);
      if (!row) throw problem('not-found', 404, 'The workspace does not exist any more.');
      await withTransaction(deps.pool, async (db) => {
        await markTornDown(db, id, deps.now());
        await publishEvent(db, { type: 'landscape.updated', at: deps.now().toISOString(), team_id: row.team_id, workspace_id: id });
      });
      await deps.services.apply(id); // a torn-down landscape keeps no replica running
      await pauseManagedServices(deps.managed, row); // after the services that used them stopped
      await refreshManagedShellFile({ ...deps, driver: deps.managed.driver }, row); // a torn-down landscape gives none
      return { detail: 'Torn down; code, variables, secrets and managed-service data kept' };
    },
  };
}

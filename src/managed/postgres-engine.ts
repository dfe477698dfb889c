// The postgres provider's engine (engine.ts): the file's `config` and the plan become a PostgresInstanceSpec that
// postgres-instance.ts creates, resumes, stops and deletes. A change that waits for a restart (or that the plan
// says restarts) restarts the server during the Sync.
import type { InstanceDetails, InstanceRequest, ProviderEngine } from './engine.ts';
import { applyInstanceLimits, instanceLimits } from './instance-process.ts';
import { findPgClientTools, pgClientMissing } from './pg-client.ts';
import { dumpPostgresInstance, restorePostgresInstance } from './postgres-dump.ts';
import { createPostgresInstance, deletePostgresInstance, isPostgresInstanceRunning, startPostgresInstance, stopPostgresInstance } from './postgres-instance.ts';
import type { PostgresInstanceSpec } from './postgres-rules.ts';
import { postgresSettings } from './postgres-settings.ts';
import { postgresParameters } from './service-values.ts';

/** The instance `request` asks for. */
export function postgresSpec(request: InstanceRequest): PostgresInstanceSpec {
  const { service } = request;
  const p = postgresParameters(request.name, service, request.version);
  const extensions = Array.isArray(service.config.extensions) ? service.config.extensions.map(String) : undefined;
  const locale = typeof service.config.locale === 'string' ? service.config.locale : undefined;
  return {
    id: request.id, major: Number(request.version), database: p.database, user: p.user, password: p.password, uid: request.uid,
    netns: request.netns, address: request.address, port: p.port, settings: postgresSettings(request.plan, service.config), limits: instanceLimits(request.plan),
    ...(extensions && { extensions }), ...(locale && { locale }),
  };
}

export function postgresDetails(request: InstanceRequest): InstanceDetails {
  const p = postgresParameters(request.name, request.service, request.version);
  return { host: p.host, port: p.port, database: p.database, user: p.user, version: request.version };
}

/** Dumps and restores of a PostgreSQL instance over the network, whichever driver runs it (pg_dump's custom format). */
export const postgresDumps: Pick<ProviderEngine, 'dump' | 'restore' | 'missingDumpTools'> = {
  async dump(host, request, file) {
    await dumpPostgresInstance(host, postgresSpec(request), file);
    return { format: 'pg_dump custom format', extension: '.dump', mediaType: 'application/octet-stream' };
  },
  restore: (host, request, file) => restorePostgresInstance(host, postgresSpec(request), file),
  async missingDumpTools(host) {
    return (await findPgClientTools(host.toolsDir)) ? undefined : pgClientMissing(host.toolsDir).detail;
  },
};

export const postgresEngine: ProviderEngine = {
  async ensure(host, request, options = {}) {
    const spec = postgresSpec(request);
    const wasRunning = await isPostgresInstanceRunning(host, request.id);
    let updating = false;
    const announce = async () => {
      if (updating) return;
      updating = true;
      await options.updating?.();
    };
    const { pendingRestart, restarted } = await createPostgresInstance(host, spec, { changing: wasRunning ? announce : undefined });
    // A restart that gave the server a new password already applied what the plan restarts it for.
    if (pendingRestart.length > 0 || (wasRunning && options.restart && !restarted)) {
      await announce();
      host.log(`managed PostgreSQL instance ${request.id} restarts to apply ${pendingRestart.join(', ') || 'its plan'}`);
      await stopPostgresInstance(host, request.id);
      await startPostgresInstance(host, spec);
    }
    await applyInstanceLimits(host, request.id, spec.limits); // cpu is live; memory came with the restart above
    return postgresDetails(request);
  },
  stop: stopPostgresInstance,
  remove: deletePostgresInstance,
  isRunning: isPostgresInstanceRunning,
  ...postgresDumps,
};


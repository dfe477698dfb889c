// The nats provider's engine (engine.ts): the file's `config`, the plan's resources and the vault's password
// become a NatsInstanceSpec that nats-instance.ts creates, resumes, stops and deletes. Its monitoring endpoint is
// the HTTP endpoint served on the managed-service host.
import type { InstanceDetails, InstanceRequest, ProviderEngine } from './engine.ts';
import { applyInstanceLimits, instanceLimits } from './instance-process.ts';
import { deleteNatsInstance, ensureNatsInstance, isNatsInstanceRunning, stopNatsInstance } from './nats-instance.ts';
import { DEFAULT_MAX_PAYLOAD, NATS_MONITORING_PORT, natsLimits, type NatsInstanceSpec } from './nats-rules.ts';
import { natsParameters } from './service-values.ts';

/** The instance `request` asks for. */
export function natsSpec(request: InstanceRequest): NatsInstanceSpec {
  const p = natsParameters(request.name, request.service, request.version);
  const resources = Object.fromEntries(Object.entries(request.plan?.resources ?? {}).map(([name, bounds]) => [name, bounds.value]));
  const maxPayload = request.service.config.maxPayload;
  return {
    id: request.id, user: p.user, password: p.password, uid: request.uid, netns: request.netns, address: request.address,
    port: p.port, monitoringPort: p.monitoringPort, jetstream: p.jetstream,
    maxPayload: typeof maxPayload === 'number' ? maxPayload : DEFAULT_MAX_PAYLOAD,
    ...natsLimits(resources),
    limits: instanceLimits(request.plan),
  };
}

export function natsDetails(request: InstanceRequest): InstanceDetails {
  const p = natsParameters(request.name, request.service, request.version);
  return { host: p.host, port: p.port, monitoringPort: p.monitoringPort, user: p.user, jetstream: p.jetstream, version: request.version };
}

export const natsEngine: ProviderEngine = {
  async ensure(host, request) {
    const spec = natsSpec(request);
    await ensureNatsInstance(host, spec, request.version);
    await applyInstanceLimits(host, request.id, spec.limits); // cpu is live; memory changes its configuration (a restart)
    return natsDetails(request);
  },
  stop: stopNatsInstance,
  remove: deleteNatsInstance,
  isRunning: isNatsInstanceRunning,
  httpPort: () => NATS_MONITORING_PORT,
};

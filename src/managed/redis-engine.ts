// The redis provider's engine (engine.ts): the file's `config`, its `secrets.password` and the plan's memory and
// connections become a RedisInstanceSpec that redis-instance.ts starts, changes, stops, deletes, dumps and restores.
import type { DumpInfo, InstanceDetails, InstanceRequest, ProviderEngine } from './engine.ts';
import { applyInstanceLimits, instanceLimits } from './instance-process.ts';
import { deleteRedisInstance, dumpRedisInstance, ensureRedisInstance, isRedisInstanceRunning, restoreRedisInstance, stopRedisInstance } from './redis-instance.ts';
import type { RedisInstanceSpec } from './redis-rules.ts';
import { redisParameters } from './service-values.ts';

export const REDIS_DUMP: DumpInfo = { format: 'redis RDB', extension: '.rdb', mediaType: 'application/octet-stream' };

/** The instance `request` asks for. */
export function redisSpec(request: InstanceRequest): RedisInstanceSpec {
  const { config } = request.service;
  const p = redisParameters(request.name, request.service, request.version);
  const resources = request.plan?.resources;
  return {
    id: request.id, major: Number(request.version), password: p.password, uid: request.uid, netns: request.netns, address: request.address, port: p.port,
    // twice maxmemory: a snapshot's fork may copy every page while the server goes on
    limits: instanceLimits(request.plan, 2),
    ...(resources?.memory && { maxmemoryMiB: resources.memory.value }),
    ...(resources?.connections && { maxclients: resources.connections.value }),
    ...(typeof config.maxmemoryPolicy === 'string' && { maxmemoryPolicy: config.maxmemoryPolicy }),
    ...(typeof config.appendonly === 'boolean' && { appendonly: config.appendonly }),
    ...(typeof config.databases === 'number' && { databases: config.databases }),
  };
}

export function redisDetails(request: InstanceRequest): InstanceDetails {
  const p = redisParameters(request.name, request.service, request.version);
  return { host: p.host, port: p.port, version: request.version };
}

export const redisEngine: ProviderEngine = {
  async ensure(host, request) {
    const spec = redisSpec(request);
    await ensureRedisInstance(host, spec);
    await applyInstanceLimits(host, request.id, spec.limits); // cpu and memory are live, as maxmemory is
    return redisDetails(request);
  },
  stop: stopRedisInstance,
  remove: deleteRedisInstance,
  isRunning: isRedisInstanceRunning,
  async dump(host, request, file) {
    await dumpRedisInstance(host, redisSpec(request), file);
    return REDIS_DUMP;
  },
  restore: (host, request, file) => restoreRedisInstance(host, redisSpec(request), file),
};

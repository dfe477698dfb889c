// A managed Redis instance as a described process (src/runtime/managed-process.ts), for drivers that run descriptions
// (the Kubernetes driver): redis.conf (it holds the password) as a secret file, and a script that starts the server on
// its data directory: with its append-only file when one was written, else without it (switched on live once it
// serves, as redis-rules.ts `appendonlyAtStart` decides for the local engine). A change of the file or the plan is
// another description: its server restarts (a snapshot is saved at every shutdown). Dumps are redis-cli --rdb over
// the network as on the local driver; a restore replaces files, which no driver of descriptions offers yet.
import { managedProcessEnv, type ManagedProcess } from '../runtime/managed-process.ts';
import { pollUntil } from '../runtime/local/processes.ts';
import type { DescribedEngine } from './described-engines.ts';
import { ManagedInstanceFailure, type InstanceRequest } from './engine.ts';
import { redisCommand } from './redis-client.ts';
import { REDIS_DUMP, redisDetails, redisSpec } from './redis-engine.ts';
import { checkRedisReady, dumpRedisInstance, waitForAof, type Readiness } from './redis-instance.ts';
import { AOF_DIR, AOF_MANIFEST, CONFIG_FILE, redisConfig, specErrors, type RedisInstanceSpec } from './redis-rules.ts';

const READY_TIMEOUT_MS = 60_000;
/** Where the script keeps the data, inside the driver's data directory. */
const DATA_SUBDIR = 'data';

/** The script (pure): the data directory made, an AOF kept only when the file asks for one, then the server. */
export function redisScript(appendonly: boolean): string {
  const { data, secrets } = managedProcessEnv;
  return [
    'set -eu',
    'umask 0077',
    `mkdir -p "$${data}/${DATA_SUBDIR}"`,
    `aof=no`,
    appendonly
      ? `if [ -f "$${data}/${DATA_SUBDIR}/${AOF_DIR}/${AOF_MANIFEST}" ]; then aof=yes; fi`
      // an AOF from a time the file asked for one is out of date: never loaded later
      : `rm -rf "$${data}/${DATA_SUBDIR}/${AOF_DIR}"`,
    // the data directory is the driver's: given on the command line, over the file's
    `exec redis-server "$${secrets}/${CONFIG_FILE}" --dir "$${data}/${DATA_SUBDIR}" --appendonly "$aof"`,
  ].join('\n');
}

/** The instance's spec before it has an address: the server listens on every address of its own. */
function unplacedSpec(request: Omit<InstanceRequest, 'netns' | 'address'>): RedisInstanceSpec {
  const spec = redisSpec({ ...request, address: '0.0.0.0' });
  // the image holds the catalog's Redis: no installed major to check here
  const errors = specErrors(spec, spec.major);
  if (errors.length > 0) throw new ManagedInstanceFailure(errors.join('; '));
  return spec;
}

export function redisProcess(request: Omit<InstanceRequest, 'netns' | 'address'>): ManagedProcess {
  const spec = unplacedSpec(request);
  return {
    provider: 'redis',
    version: String(spec.major),
    script: redisScript(spec.appendonly ?? false),
    env: { LC_ALL: 'C', TZ: 'UTC' },
    secretFiles: { [CONFIG_FILE]: redisConfig(spec, false, null) },
    uid: spec.uid,
    port: spec.port,
    storageMiB: request.plan?.resources.storage?.value ?? 512,
    ...(spec.limits && { limits: spec.limits }),
    stopGraceSeconds: 30,
  };
}

async function awaitServing(spec: RedisInstanceSpec): Promise<void> {
  let last: Readiness = { ready: false, reason: 'none' };
  const ready = await pollUntil(async () => {
    last = await checkRedisReady(spec, 2000);
    return last.ready;
  }, READY_TIMEOUT_MS, 100);
  if (!ready) throw new ManagedInstanceFailure(`Redis instance ${spec.id} did not answer within ${READY_TIMEOUT_MS / 1000} s (last answer: ${last.ready ? 'ready' : last.reason})`);
}

export const redisDescribed: DescribedEngine = {
  describe: redisProcess,
  async configure(_host, request) {
    const spec = redisSpec(request);
    await awaitServing(spec);
    if (spec.appendonly) {
      const current = await redisCommand(spec, ['CONFIG', 'GET', 'appendonly']);
      if (!(Array.isArray(current) && current[1] === 'yes')) {
        await redisCommand(spec, ['CONFIG', 'SET', 'appendonly', 'yes']);
        await waitForAof(spec);
      }
    }
    return [];
  },
  details: (request) => redisDetails({ ...request, address: '' }),
  async dump(host, request, file) {
    await dumpRedisInstance(host, redisSpec(request), file);
    return REDIS_DUMP;
  },
};

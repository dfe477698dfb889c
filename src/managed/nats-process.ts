// A managed NATS instance as a described process (src/runtime/managed-process.ts), for drivers that run descriptions
// (the Kubernetes driver): nats.conf (it holds the password) as a secret file, JetStream's store on the data
// directory, the client port and the monitoring endpoint on the
// instance's name. A change of the file or the plan is another description: its server restarts.
import { managedProcessEnv, type ManagedProcess } from '../runtime/managed-process.ts';
import { pollUntil } from '../runtime/local/processes.ts';
import type { DescribedEngine } from './described-engines.ts';
import { ManagedInstanceFailure, type InstanceRequest } from './engine.ts';
import { natsDetails, natsSpec } from './nats-engine.ts';
import { checkNatsReady } from './nats-instance.ts';
import { CONFIG_FILE, natsConfig, natsSpecErrors } from './nats-rules.ts';

const READY_TIMEOUT_MS = 60_000;

/** The script (pure): the server from the image's PATH; its file names the data directory by its variable. */
export function natsScript(): string {
  return ['set -eu', 'umask 0077', `exec nats-server -c "$${managedProcessEnv.secrets}/${CONFIG_FILE}"`].join('\n');
}

export function natsProcess(request: Omit<InstanceRequest, 'netns' | 'address'>): ManagedProcess {
  const spec = natsSpec({ ...request, address: '0.0.0.0' });
  const errors = natsSpecErrors(spec);
  if (errors.length > 0) throw new ManagedInstanceFailure(errors.join('; '));
  return {
    provider: 'nats',
    version: request.version,
    script: natsScript(),
    env: { TZ: 'UTC' },
    // JetStream's store on the data directory: nats-server reads an undefined $NAME of its file from the environment
    secretFiles: { [CONFIG_FILE]: natsConfig(spec, `$${managedProcessEnv.data}`) },
    uid: spec.uid,
    port: spec.port,
    extraPorts: [spec.monitoringPort],
    storageMiB: request.plan?.resources.storage?.value ?? 1024,
    ...(spec.limits && { limits: spec.limits }),
    stopGraceSeconds: 30,
  };
}

export const natsDescribed: DescribedEngine = {
  describe: natsProcess,
  async configure(_host, request) {
    const spec = natsSpec(request);
    let last = 'none';
    const ready = await pollUntil(async () => {
      const answer = await checkNatsReady(spec, 2000);
      if (!answer.ready) last = answer.reason;
      return answer.ready;
    }, READY_TIMEOUT_MS, 100);
    if (!ready) throw new ManagedInstanceFailure(`NATS instance ${spec.id} did not answer within ${READY_TIMEOUT_MS / 1000} s (last answer: ${last})`);
    return [];
  },
  details: (request) => natsDetails({ ...request, address: '' }),
};

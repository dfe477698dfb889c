// The agent in replica mode (main.ts): a `steps` service replica configured by the file the driver put in its
// directory (its index from SVC_REPLICA_INDEX where a StatefulSet gives it), its log written to a file there or, with
// SVC_REPLICA_LOG=stdout, to standard output (the Kubernetes driver reads it through pods/log).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createLogWriter, createStdoutLogWriter } from './log-file.ts';
import { startReplicaAgent } from './replica-agent.ts';
import { REPLICA_CONFIG_FILE, REPLICA_POD_DIR, replicaConfigWithIndex, replicaEnv, type ReplicaConfig } from './replica-protocol.ts';

export function startReplica(host: string, port: number, workspaceDir: string) {
  const env = process.env;
  const dir = env[replicaEnv.dir] ?? REPLICA_POD_DIR;
  const config = replicaConfigWithIndex(JSON.parse(readFileSync(path.join(dir, REPLICA_CONFIG_FILE), 'utf8')) as ReplicaConfig, env);
  const log = env[replicaEnv.log] === 'stdout' ? createStdoutLogWriter() : createLogWriter(dir);
  return startReplicaAgent({ host, port, workspaceDir, config, log: (stream, text) => log.write(stream, text) });
}

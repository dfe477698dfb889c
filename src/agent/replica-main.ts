// The agent in replica mode (main.ts): a `steps` service replica configured by the file the driver put in its
// directory, its log written to a file there.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createLogWriter } from './log-file.ts';
import { startReplicaAgent } from './replica-agent.ts';
import { REPLICA_CONFIG_FILE, REPLICA_POD_DIR, replicaEnv, type ReplicaConfig } from './replica-protocol.ts';

export function startReplica(host: string, port: number, workspaceDir: string) {
  const dir = process.env[replicaEnv.dir] ?? REPLICA_POD_DIR;
  const config = JSON.parse(readFileSync(path.join(dir, REPLICA_CONFIG_FILE), 'utf8')) as ReplicaConfig;
  const log = createLogWriter(dir);
  return startReplicaAgent({ host, port, workspaceDir, config, log: (stream, text) => log.write(stream, text) });
}

// The agent program, started by the runtime driver as the main process of a pod. Settings come from the
// environment (protocol.ts, replica-protocol.ts). SVC_AGENT_MODE=replica runs a `steps` service replica
// (replica-agent.ts), whose log goes to a file in its directory; otherwise the agent runs the editor and its lines go
// to standard output, which the driver keeps as the pod's log.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startAgent } from './agent.ts';
import { createLogWriter, createStdoutLogWriter } from './log-file.ts';
import { agentEnv, DEFAULT_AGENT_PORT, DEFAULT_EDITOR_PORT } from './protocol.ts';
import { startReplicaAgent } from './replica-agent.ts';
import { REPLICA_CONFIG_FILE, REPLICA_POD_DIR, replicaConfigWithIndex, replicaEnv, type ReplicaConfig } from './replica-protocol.ts';

const env = process.env;
const host = env[agentEnv.agentHost] ?? '0.0.0.0';
const port = Number(env[agentEnv.agentPort] ?? DEFAULT_AGENT_PORT);
const workspaceDir = env[agentEnv.workspaceDir] ?? process.cwd();

async function startReplicaMode() {
  const dir = env[replicaEnv.dir] ?? REPLICA_POD_DIR;
  const config = replicaConfigWithIndex(JSON.parse(readFileSync(path.join(dir, REPLICA_CONFIG_FILE), 'utf8')) as ReplicaConfig, env);
  const log = env[replicaEnv.log] === 'stdout' ? createStdoutLogWriter() : createLogWriter(dir);
  return startReplicaAgent({ host, port, workspaceDir, config, log: (stream, text) => log.write(stream, text) });
}

/** The pod's token from the file the driver bound, read once; commands never see the file's name. */
function readToken(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const agent =
  env[replicaEnv.mode] === 'replica'
    ? await startReplicaMode()
    : await startAgent({
        host,
        port,
        editorHost: env[agentEnv.editorHost] ?? '0.0.0.0',
        editorPort: Number(env[agentEnv.editorPort] ?? DEFAULT_EDITOR_PORT),
        editorCommand: env[agentEnv.editorCommand],
        workspaceDir,
        token: readToken(env[agentEnv.tokenFile]),
      });

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void agent.close().then(() => process.exit(0));
  });
}

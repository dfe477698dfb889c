// The agent program, started by the runtime driver as the main process of a pod. Settings come from the
// environment (protocol.ts); logs go to standard output, which the driver keeps as the pod's log.
import { startAgent } from './agent.ts';
import { agentEnv, DEFAULT_AGENT_PORT, DEFAULT_EDITOR_PORT } from './protocol.ts';

const env = process.env;
const agent = await startAgent({
  host: env[agentEnv.agentHost] ?? '0.0.0.0',
  port: Number(env[agentEnv.agentPort] ?? DEFAULT_AGENT_PORT),
  editorHost: env[agentEnv.editorHost] ?? '0.0.0.0',
  editorPort: Number(env[agentEnv.editorPort] ?? DEFAULT_EDITOR_PORT),
  editorCommand: env[agentEnv.editorCommand],
  workspaceDir: env[agentEnv.workspaceDir] ?? process.cwd(),
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void agent.close().then(() => process.exit(0));
  });
}

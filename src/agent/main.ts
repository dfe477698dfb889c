// The agent program, started by the runtime driver as the main process of a pod. Settings come from the
// environment (protocol.ts, replica-protocol.ts). SVC_AGENT_MODE=replica runs a `steps` service replica
// (replica-agent.ts), whose log goes to a file in its directory; otherwise the agent runs the editor and its lines go
// to standard output, which the driver keeps as the pod's log. This file loads next to nothing: the editor is
// started first, and only then the rest of the agent (a chunk of its own in the bundle, agent-bundle.ts), so the
// editor's start and the agent's overlap (docs/runtime.md, "How long a wake takes").
import { readFileSync } from 'node:fs';
import { editorGitDir, editorGitEnv } from './editor-git-paths.ts';
import { startEditor } from './editor-start.ts';
import { agentEnv, DEFAULT_AGENT_PORT, DEFAULT_EDITOR_PORT, type PodMemory } from './protocol.ts';
import { replicaEnv } from './replica-protocol.ts';

const env = process.env;
const host = env[agentEnv.agentHost] ?? '0.0.0.0';
const port = Number(env[agentEnv.agentPort] ?? DEFAULT_AGENT_PORT);
const workspaceDir = env[agentEnv.workspaceDir] ?? process.cwd();

/** The pod's token from the file the driver bound, read once; commands never see the file's name. */
function readToken(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

async function startEditorMode() {
  const log = (line: string) => console.log(`agent: ${line}`);
  // the editor's git credentials: paths fixed now, served once the agent has loaded (agent.ts)
  const gitDir = editorGitDir();
  const editorOptions = {
    editorEnv: editorGitEnv(gitDir),
    editorHost: env[agentEnv.editorHost] ?? '0.0.0.0',
    editorPort: Number(env[agentEnv.editorPort] ?? DEFAULT_EDITOR_PORT),
    editorCommand: env[agentEnv.editorCommand],
    workspaceDir,
    log,
    memory: podMemory(env[agentEnv.editorMemory]),
  };
  const editor = startEditor(editorOptions);
  const { startAgent } = await import('./agent.ts');
  return startAgent({ ...editorOptions, host, port, token: readToken(env[agentEnv.tokenFile]), editor, editorGitDir: gitDir });
}

async function startReplicaMode() {
  const { startReplica } = await import('./replica-main.ts');
  return startReplica(host, port, workspaceDir);
}

const agent = env[replicaEnv.mode] === 'replica' ? await startReplicaMode() : await startEditorMode();

function podMemory(text: string | undefined): PodMemory | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as PodMemory;
  } catch {
    return undefined;
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void agent.close().then(() => process.exit(0));
  });
}

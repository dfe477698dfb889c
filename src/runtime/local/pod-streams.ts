// Shells and forwarded ports of the local driver: a WebSocket to the agent of the pod (the editor pod's, or a
// replica's) at the address its record names, with the pod's token. The agent runs the command or dials the port
// inside the pod (src/agent/stream-server.ts), so the server never enters a pod's namespaces itself.
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL, SSH_PROTOCOL } from '../../core/channel-protocol.ts';
import { AGENT_EDITOR_GIT_PATH, EDITOR_GIT_PROTOCOL, execRequestTarget, forwardRequestTarget, sshRequestTarget } from '../../agent/stream-protocol.ts';
import { connectAgent, type AgentEndpoint } from '../agent-connection.ts';
import { RuntimeFailure, type PodStreams, type PodTarget, type WorkspaceRef } from '../driver.ts';
import { isPodRunning, readPodRecord, type PodHost } from './pods.ts';
import { isSameProcess } from './processes.ts';
import { readReplicaRecord } from './replica-files.ts';

export function createPodStreams(host: PodHost): PodStreams {
  return {
    async openExec(workspace, target, spec) {
      const endpoint = await endpointOf(host, workspace, target);
      const { path, headers } = execRequestTarget(spec);
      return connectAgent(endpoint, path, headers, EXEC_PROTOCOL, { refusalBody: true });
    },
    async openPortForward(workspace, target, to) {
      const endpoint = await endpointOf(host, workspace, target);
      return connectAgent(endpoint, forwardRequestTarget(to), {}, PORT_FORWARD_PROTOCOL, { refusalBody: true });
    },
    async openEditorGit(workspace) {
      const endpoint = await endpointOf(host, workspace, { kind: 'editor' });
      return connectAgent(endpoint, AGENT_EDITOR_GIT_PATH, {}, EDITOR_GIT_PROTOCOL, { refusalBody: true });
    },
    async openSsh(workspace, spec) {
      const endpoint = await endpointOf(host, workspace, { kind: 'editor' });
      const { path, headers } = sshRequestTarget(spec);
      return connectAgent(endpoint, path, headers, SSH_PROTOCOL, { refusalBody: true });
    },
  };
}

const olderPod = 'its pod was started by an older svc without shells; stop and start the workspace to get them';

async function endpointOf(host: PodHost, workspace: WorkspaceRef, target: PodTarget): Promise<AgentEndpoint> {
  if (target.kind === 'editor') {
    const record = await readPodRecord(host, workspace.id);
    if (!record || !(await isPodRunning(record))) throw new RuntimeFailure('agent', 'The workspace is not running');
    if (!record.agentToken) throw new RuntimeFailure('agent', `The workspace cannot open a shell: ${olderPod}`);
    return { host: record.host, port: record.agentPort, token: record.agentToken };
  }
  const record = await readReplicaRecord(host.dataDir, workspace.id, target.service, target.index);
  const running = record && !record.stoppedAt && !record.failedToStart && (await isSameProcess(record.pid, record.startTime));
  if (!record || !running) throw new RuntimeFailure('agent', `Replica ${target.index} of ${target.service} is not running`);
  if (!record.agentToken) throw new RuntimeFailure('agent', `Replica ${target.index} of ${target.service} cannot open a shell: ${olderPod}`);
  return { host: record.host, port: record.agentPort, token: record.agentToken };
}

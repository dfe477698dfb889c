// Shells and forwarded ports of the local driver: a WebSocket to the agent of the pod (the editor pod's, or a
// replica's) at the address its record names, with the pod's token. The agent runs the command or dials the port
// inside the pod (src/agent/stream-server.ts), so the server never enters a pod's namespaces itself.
import WebSocket from 'ws';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL } from '../../core/channel-protocol.ts';
import { execRequestTarget, forwardRequestTarget } from '../../agent/stream-protocol.ts';
import { RuntimeFailure, type PodStreams, type PodTarget, type WorkspaceRef } from '../driver.ts';
import { isPodRunning, readPodRecord, type PodHost } from './pods.ts';
import { isSameProcess } from './processes.ts';
import { readReplicaRecord } from './replica-files.ts';

interface AgentEndpoint {
  host: string;
  port: number;
  token: string;
}

const OPEN_TIMEOUT_MS = 10_000;

export function createPodStreams(host: PodHost): PodStreams {
  return {
    async openExec(workspace, target, spec) {
      const endpoint = await endpointOf(host, workspace, target);
      const { path, headers } = execRequestTarget(spec);
      return connect(endpoint, path, headers, EXEC_PROTOCOL);
    },
    async openPortForward(workspace, target, to) {
      const endpoint = await endpointOf(host, workspace, target);
      return connect(endpoint, forwardRequestTarget(to), {}, PORT_FORWARD_PROTOCOL);
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

function connect(endpoint: AgentEndpoint, path: string, headers: Record<string, string>, protocol: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://${endpoint.host}:${endpoint.port}${path}`, protocol, {
      headers: { ...headers, authorization: `Bearer ${endpoint.token}` },
      perMessageDeflate: false,
      handshakeTimeout: OPEN_TIMEOUT_MS,
      maxPayload: 16 * 1024 * 1024,
    });
    const fail = (reason: string) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      reject(new RuntimeFailure('agent', `The pod's agent did not take the stream: ${reason}`));
    };
    socket.once('open', () => {
      socket.removeAllListeners('error');
      socket.removeAllListeners('unexpected-response');
      socket.on('error', () => socket.terminate()); // a broken stream closes; 'close' tells the caller
      socket.pause(); // frames that came with the handshake wait for the caller's listener
      resolve(socket);
    });
    socket.once('error', (error) => fail(error.message));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => fail(`${response.statusCode} ${body.trim()}`));
      response.on('error', () => fail(String(response.statusCode)));
    });
  });
}

// A WebSocket to a pod's agent (src/agent/stream-server.ts) at its address with the pod's token: how both drivers
// open shells, forwarded ports and stage steps, so the server never enters a pod's namespaces itself.
import { zeroMask } from '../core/channel-protocol.ts';
import WebSocket from 'ws';
import { RuntimeFailure } from './driver.ts';

export interface AgentEndpoint {
  host: string;
  port: number;
  token: string;
}

const OPEN_TIMEOUT_MS = 10_000;

/**
 * An open WebSocket to the agent speaking `protocol`, paused (frames that came with the handshake wait for the
 * caller's listener). When the agent refuses, the failure names its status, and its answer with `refusalBody`.
 */
export function connectAgent(
  endpoint: AgentEndpoint,
  requestPath: string,
  headers: Record<string, string>,
  protocol: string,
  options: { refusalBody?: boolean } = {},
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    const socket = new WebSocket(`ws://${host}:${endpoint.port}${requestPath}`, protocol, {
      headers: { ...headers, authorization: `Bearer ${endpoint.token}` },
      perMessageDeflate: false,
      generateMask: zeroMask, // svc's own hop to the pod (docs/decisions.md "Unmasked frames for SSH and the agent streams")
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
      socket.pause();
      resolve(socket);
    });
    socket.once('error', (error) => fail(error.message));
    socket.once('unexpected-response', (_request, response) => {
      if (!options.refusalBody) {
        response.resume();
        fail(String(response.statusCode));
        return;
      }
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => fail(`${response.statusCode} ${body.trim()}`));
      response.on('error', () => fail(String(response.statusCode)));
    });
  });
}

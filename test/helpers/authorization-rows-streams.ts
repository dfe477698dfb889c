// Authorization matrix rows of the WebSocket routes (a shell, a forwarded port): each caller attempts the upgrade
// itself, offering the route's subprotocol, and the status is the refusal the server answers before the upgrade (or
// 101 when it upgrades). The matrix workspace is being created, so an allowed caller is refused by its state (409).
import WebSocket from 'ws';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL, SSH_PROTOCOL } from '../../src/core/channel-protocol.ts';
import type { Answer, ApiClient } from './client.ts';
import { all, type Row } from './authorization-matrix.ts';

/** A WebSocket upgrade of `path` (under /api/v1) with the client's credentials: the refusal as an Answer, or 101. */
export function attemptUpgrade(client: ApiClient, path: string, protocol: string): Promise<Answer> {
  const url = new URL(`${client.baseUrl}/api/v1${path}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const headers: Record<string, string> = {};
  if (client.auth.token) headers.authorization = `Bearer ${client.auth.token}`;
  if (client.auth.cookie) headers.cookie = `__Host-svc_session=${client.auth.cookie}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocol, { headers });
    socket.once('open', () => {
      socket.close();
      resolve({ status: 101, headers: new Headers(), body: undefined, text: '' });
    });
    socket.once('unexpected-response', (request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const answerHeaders = new Headers(Object.entries(response.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])) as [string, string][]);
        request.destroy();
        resolve({ status: response.statusCode ?? 0, headers: answerHeaders, body: text ? JSON.parse(text) : undefined, text });
      });
    });
    socket.on('error', reject); // after an answer, settled already
  });
}

export const streamRows: Row[] = [
  {
    route: 'GET /api/v1/workspaces/{ws}/exec',
    call: (c, w) => attemptUpgrade(c, `/workspaces/${w.workspace}/exec?command=true`, EXEC_PROTOCOL),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  {
    route: 'GET /api/v1/workspaces/{ws}/port-forward',
    call: (c, w) => attemptUpgrade(c, `/workspaces/${w.workspace}/port-forward?port=8080`, PORT_FORWARD_PROTOCOL),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
  {
    route: 'GET /api/v1/workspaces/{ws}/ssh',
    call: (c, w) => attemptUpgrade(c, `/workspaces/${w.workspace}/ssh`, SSH_PROTOCOL),
    expect: { ...all(409), outsider: 404, viewer: 403 },
  },
];

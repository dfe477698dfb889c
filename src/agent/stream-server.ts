// The agent's streams on its control port (stream-protocol.ts): WebSocket upgrades of `/exec`, `/port-forward` and `/ssh`,
// refused unless they carry the pod's token. Without a token (a pod started by an older server) there are none.
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, WebSocketServer } from 'ws';
import { EXEC_PROTOCOL, PORT_FORWARD_PROTOCOL, SSH_PROTOCOL } from '../core/channel-protocol.ts';
import { runExec, type ExecContext } from './exec-session.ts';
import { forwardPort } from './port-forward.ts';
import type { EditorGit } from './editor-git.ts';
import { AGENT_EDITOR_GIT_PATH, AGENT_EXEC_PATH, AGENT_PORT_FORWARD_PATH, AGENT_SSH_PATH, EDITOR_GIT_PROTOCOL, EXEC_ENV_HEADER, EXEC_GIT_HEADER, readExecRequest, readForwardRequest, readSshRequest, SSH_HOST_KEY_HEADER } from './stream-protocol.ts';

export interface StreamOptions extends ExecContext {
  token: string | undefined;
  /** Where the servers' editor git channels go (agent.ts); none in a replica or without code-server's git files. */
  editorGit?: Promise<EditorGit | undefined>;
}

/** What handles an upgrade request: the WebSocket server of the streams, made once. */
export function streamUpgrades(options: StreamOptions): (request: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (offered) => [...offered][0] ?? false });
  return (request, socket, head) => {
    const url = new URL(request.url ?? '/', 'http://agent');
    if (!options.token || !hasToken(request.headers.authorization, options.token)) return refuse(socket, 401, 'the pod token is missing or wrong');
    if (url.pathname === AGENT_EDITOR_GIT_PATH) return void acceptEditorGit(sockets, options, request, socket, head);
    if (url.pathname === AGENT_SSH_PATH) return acceptSsh(sockets, options, request, socket, head);
    const protocol = url.pathname === AGENT_EXEC_PATH ? EXEC_PROTOCOL : url.pathname === AGENT_PORT_FORWARD_PATH ? PORT_FORWARD_PROTOCOL : undefined;
    if (!protocol) return refuse(socket, 404, 'no such stream');
    const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
    if (!offered.includes(protocol)) return refuse(socket, 400, `the stream speaks ${protocol}`);
    const envHeader = request.headers[EXEC_ENV_HEADER];
    const gitHeader = request.headers[EXEC_GIT_HEADER];
    const wanted =
      protocol === EXEC_PROTOCOL
        ? readExecRequest(url, typeof envHeader === 'string' ? envHeader : undefined, typeof gitHeader === 'string' ? gitHeader : undefined)
        : readForwardRequest(url);
    if (typeof wanted === 'string') return refuse(socket, 400, wanted);
    request.headers['sec-websocket-protocol'] = protocol;
    sockets.handleUpgrade(request, socket, head, (ws) => {
      ws.on('error', () => ws.terminate());
      if ('command' in wanted) runExec(ws, wanted, options);
      else forwardPort(ws, wanted);
    });
  };
}

async function acceptEditorGit(sockets: WebSocketServer, options: StreamOptions, request: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (!offered.includes(EDITOR_GIT_PROTOCOL)) return refuse(socket, 400, `the stream speaks ${EDITOR_GIT_PROTOCOL}`);
  const editorGit = await options.editorGit;
  if (!editorGit) return refuse(socket, 404, 'this pod serves no editor git credentials');
  request.headers['sec-websocket-protocol'] = EDITOR_GIT_PROTOCOL;
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => ws.terminate());
    editorGit.accept(ws);
  });
}

/** One SSH connection (ssh-server.ts): the WebSocket as a byte stream, its messages the connection's bytes. */
function acceptSsh(sockets: WebSocketServer, options: StreamOptions, request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  if (!offered.includes(SSH_PROTOCOL)) return refuse(socket, 400, `the stream speaks ${SSH_PROTOCOL}`);
  const header = (name: string) => (typeof request.headers[name] === 'string' ? (request.headers[name] as string) : undefined);
  const wanted = readSshRequest(header(SSH_HOST_KEY_HEADER), header(EXEC_ENV_HEADER), header(EXEC_GIT_HEADER));
  if (typeof wanted === 'string') return refuse(socket, 400, wanted);
  request.headers['sec-websocket-protocol'] = SSH_PROTOCOL;
  sockets.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => ws.terminate());
    const transport = createWebSocketStream(ws); // holds what the client sends while the SSH server loads
    import('./ssh-server.ts').then(
      ({ serveSshConnection }) => serveSshConnection(transport, wanted, options),
      (error: Error) => ws.close(1011, `the SSH server could not load: ${error.message}`.slice(0, 120)),
    );
  });
}

function hasToken(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.replace(/^Bearer /, '') ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const text = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found' }[status] ?? 'Error';
  socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\nConnection: close\r\n\r\n${reason}`);
}

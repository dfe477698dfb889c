// WebSocket upgrades on console and API hosts. Only the stream routes (exec, port-forward) speak WebSocket, so only
// their upgrades go to @fastify/websocket, which then runs its hooks on their context alone instead of on every
// request of the API. Any other upgrade is answered as the plain request it also is (RFC 9110 7.8: a server may
// ignore Upgrade), on a connection closed after the answer, as @fastify/websocket did with them.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { SERVER_VERSION } from '../../core/version.ts';
import { API_PREFIX } from '../context.ts';

const streamPath = new RegExp(`^${API_PREFIX}/workspaces/[^/?#]+/(?:exec|port-forward|ssh)(?:\\?|$)`);

/**
 * Whether an upgrade asks for one of the stream routes. A path the router would match only after decoding (an encoded
 * letter) takes the plain way: the route then sees no upgrade and refuses with 400, never opening a stream.
 */
export function isStreamUpgrade(url: string | undefined): boolean {
  return url !== undefined && streamPath.test(url);
}

/** Answers an upgrade request through `answer` (the console and API) as a plain request, then closes the connection. */
export function answerUpgradeAsRequest(
  request: IncomingMessage,
  socket: Duplex,
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): void {
  // Node removed its own error listener from the socket before the upgrade event.
  socket.on('error', () => socket.destroy());
  const response = new ServerResponse(request);
  response.shouldKeepAlive = false;
  response.setHeader('svc-version', SERVER_VERSION);
  response.assignSocket(socket as Parameters<ServerResponse['assignSocket']>[0]);
  response.on('finish', () => socket.destroy());
  answer(request, response);
}

// The agent's control server, the same in both modes: `GET /status` answers what the agent observes now, and the
// server's exec and port-forward streams upgrade on it (stream-server.ts). `GET /status?wait=<ms>` answers at the
// next change the agent announces (its editor answered or exited), or after that long: the driver learns that the
// editor is ready the moment the agent does, instead of at its next poll.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { AGENT_STATUS_PATH } from './protocol.ts';
import { AGENT_MAX_HEADER_BYTES } from './stream-protocol.ts';
import type { StreamOptions } from './stream-server.ts';

export interface StatusServer {
  /** The chosen port when 0 was asked for. */
  port: number;
  close(): Promise<void>;
}

/** The longest a `?wait=` request is held. */
export const MAX_STATUS_WAIT_MS = 30_000;

/**
 * The streams' code (the WebSocket library, exec, port-forward) is loaded at the first upgrade, not while the
 * agent starts: a wake waits for the agent to listen, never for a stream.
 */
function serveStreamsWhenAsked(server: http.Server, streams: StreamOptions): void {
  let handler: Promise<ReturnType<typeof import('./stream-server.ts').streamUpgrades>> | undefined;
  server.on('upgrade', (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    handler ??= import('./stream-server.ts').then(({ streamUpgrades }) => streamUpgrades(streams));
    handler.then((handle) => handle(request, socket, head), () => socket.destroy());
  });
}

export async function serveStatus(
  host: string,
  port: number,
  status: () => unknown,
  streams?: StreamOptions,
  onChange?: (listener: () => void) => () => void,
): Promise<StatusServer> {
  const server = http.createServer({ maxHeaderSize: AGENT_MAX_HEADER_BYTES }, (request, response) => {
    const url = new URL(request.url ?? '/', 'http://agent');
    if (request.method === 'GET' && url.pathname === AGENT_STATUS_PATH) {
      const answer = () => {
        if (response.writableEnded) return;
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        response.end(JSON.stringify(status()));
      };
      const waitMs = Math.min(MAX_STATUS_WAIT_MS, Number(url.searchParams.get('wait')) || 0);
      if (waitMs <= 0 || !onChange) return answer();
      const stop = onChange(() => done());
      const timer = setTimeout(() => done(), waitMs);
      const done = () => {
        clearTimeout(timer);
        stop();
        answer();
      };
      response.once('close', () => {
        clearTimeout(timer);
        stop();
      });
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('Not found.');
  });
  if (streams) serveStreamsWhenAsked(server, streams);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

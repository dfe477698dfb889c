// The agent's control server, the same in both modes: `GET /status` answers what the agent observes now, and the
// server's exec and port-forward streams upgrade on it (stream-server.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_STATUS_PATH } from './protocol.ts';
import { AGENT_MAX_HEADER_BYTES } from './stream-protocol.ts';
import { serveStreams, type StreamOptions } from './stream-server.ts';

export interface StatusServer {
  /** The chosen port when 0 was asked for. */
  port: number;
  close(): Promise<void>;
}

export async function serveStatus(host: string, port: number, status: () => unknown, streams?: StreamOptions): Promise<StatusServer> {
  const server = http.createServer({ maxHeaderSize: AGENT_MAX_HEADER_BYTES }, (request, response) => {
    if (request.method === 'GET' && request.url === AGENT_STATUS_PATH) {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(status()));
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('Not found.');
  });
  if (streams) serveStreams(server, streams);
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

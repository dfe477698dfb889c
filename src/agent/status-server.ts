// The agent's control server, the same in both modes: `GET /status` answers what the agent observes now.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AGENT_STATUS_PATH } from './protocol.ts';

export interface StatusServer {
  /** The chosen port when 0 was asked for. */
  port: number;
  close(): Promise<void>;
}

export async function serveStatus(host: string, port: number, status: () => unknown): Promise<StatusServer> {
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === AGENT_STATUS_PATH) {
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(status()));
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('Not found.');
  });
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

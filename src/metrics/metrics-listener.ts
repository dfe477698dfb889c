// `--metrics-listen HOST:PORT`: the metrics for a scraper without credentials, on an address of their own (the
// operator keeps it off the public network). Only GET /metrics; anything else is a problem like the API's.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { urlFor } from '../core/config.ts';
import { problem, type Problem } from '../core/problems.ts';
import { METRICS_CONTENT_TYPE, type ServerMetrics } from './server-metrics.ts';

export interface MetricsListener {
  /** `http://host:port/metrics`, with the port it got (port 0 picks a free one). */
  url: string;
  close(): Promise<void>;
}

function sendProblem(response: http.ServerResponse, refusal: Problem): void {
  response.writeHead(refusal.status, { 'content-type': 'application/problem+json', ...refusal.headers });
  response.end(JSON.stringify(refusal.toBody()));
}

async function answer(metrics: ServerMetrics, request: http.IncomingMessage, response: http.ServerResponse, log: (message: string) => void): Promise<void> {
  const pathname = new URL(request.url ?? '/', 'http://metrics').pathname;
  if (pathname !== '/metrics') return sendProblem(response, problem('not-found', 404, 'This address serves only GET /metrics.'));
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return sendProblem(response, problem('method-not-allowed', 405, 'The metrics are read with GET.', { headers: { allow: 'GET, HEAD' } }));
  }
  try {
    const text = await metrics.text();
    response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : text);
  } catch (error) {
    log(`metrics: ${(error as Error).message}`);
    sendProblem(response, problem('unavailable', 503, 'The metrics cannot be read right now (the database does not answer).', { headers: { 'retry-after': '5' } }));
  }
}

export async function listenForMetrics(metrics: ServerMetrics, address: { host: string; port: number }, log: (message: string) => void): Promise<MetricsListener> {
  const server = http.createServer((request, response) => void answer(metrics, request, response, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`--metrics-listen ${address.host}:${address.port}: ${error.message}`)));
    server.listen(address.port, address.host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${urlFor(address.host, port)}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

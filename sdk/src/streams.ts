// The API's WebSocket routes (a shell, a forwarded port), typed by the document: the address of an upgrade with its
// path and query parameters, and the subprotocol to offer. Opening the socket is the caller's (a browser's WebSocket,
// or the ws package in Node, which can send the Authorization header that a browser's cannot).
import type { paths } from './generated/openapi.ts';
import { streamProtocols } from './generated/streams.ts';

export { streamProtocols };

/** A WebSocket route of the document: `'/api/v1/workspaces/{ws}/exec'`. */
export type StreamPath = keyof typeof streamProtocols & keyof paths;

type StreamParameters<P extends StreamPath> = paths[P]['get']['parameters'];

export interface StreamParams<P extends StreamPath> {
  path: NonNullable<StreamParameters<P>['path']>;
  query?: StreamParameters<P>['query'];
}

export interface StreamAddress<P extends StreamPath> {
  /** ws: or wss: */
  url: URL;
  protocol: (typeof streamProtocols)[P];
}

/**
 * Where to open a stream and the subprotocol to offer: `streamAddress(base, '/api/v1/workspaces/{ws}/exec', { path:
 * { ws: 1 }, query: { command: ['ls'], tty: false } })`. `baseUrl` '' means the page's own origin (in a browser).
 * An array query parameter is repeated (`command=ls&command=-l`).
 */
export function streamAddress<P extends StreamPath>(baseUrl: string, route: P, params: StreamParams<P>): StreamAddress<P> {
  const values = params.path as Record<string, string | number>;
  const pathname = route.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (values[name] === undefined) throw new TypeError(`${route} needs the path parameter ${name}`);
    return encodeURIComponent(String(values[name]));
  });
  const base = baseUrl || (globalThis as { location?: { href: string } }).location?.href;
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${pathname}`, base);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  for (const [name, value] of Object.entries((params.query ?? {}) as Record<string, unknown>)) {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) url.searchParams.append(name, String(item));
  }
  return { url, protocol: streamProtocols[route] };
}

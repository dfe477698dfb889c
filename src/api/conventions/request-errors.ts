// Requests refused before any route sees them: by Node's parser (a malformed request line or header, a
// Content-Length that is no number, headers over MAX_HEADER_BYTES), by nginx in front for the same reasons (it sends
// them to ERROR_PATH), by Fastify's router (a path that is no valid percent-encoding, a parameter over its length), and
// paths with an encoded NUL (nginx refuses them itself, so svc alone does too). API and console hosts get an RFC 9457
// problem, workspace hosts the router's page (spec 7), both with Svc-Version, whichever data plane is in front.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { problem, type Problem } from '../../core/problems.ts';
import { SERVER_VERSION } from '../../core/version.ts';
import { ERROR_PATH } from '../../router/nginx-config.ts';
import { renderPage, type RouterPageName } from '../../router/pages.ts';
import { MAX_URL_LENGTH } from '../../router/routes.ts';
import { sendProblem } from './problems.ts';

/** Node's limit on a request's line and headers together (its default is 16 KiB): a 20,000-character address is read, then refused as too long. */
export const MAX_HEADER_BYTES = 64 * 1024;

export type RequestErrorStatus = 400 | 413 | 414 | 431;

const requestErrors: Record<RequestErrorStatus, { problem: () => Problem; page: RouterPageName }> = {
  400: {
    problem: () => problem('bad-request', 400, 'The request is malformed (its request line, a header, or a Content-Length that is not a length). Check it and send it again.'),
    page: 'badRequest',
  },
  413: { problem: () => problem('body-too-large', 413, 'The request body is larger than this server accepts.'), page: 'tooLarge' },
  414: { problem: () => uriTooLong(), page: 'uriTooLong' },
  // The spec's pages have no 431: workspace hosts get "400 Bad request", as nginx itself says for such headers.
  431: { problem: () => problem('headers-too-large', 431, 'The request headers are larger than this server accepts (64 KiB).'), page: 'badRequest' },
};

export const uriTooLong = (): Problem => problem('uri-too-long', 414, `The address is longer than ${MAX_URL_LENGTH} characters. Shorten its path or query.`);

export interface RequestErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The answer to a refused request: a problem for API hosts, the router's page for workspace hosts (by `accept`). */
export function requestErrorAnswer(status: RequestErrorStatus, to: { workspaceHost: boolean; accept: string | undefined; instance?: string }): RequestErrorAnswer {
  const known = requestErrors[status];
  if (to.workspaceHost) {
    const page = renderPage(known.page, { accept: to.accept });
    return { ...page, headers: { ...page.headers, 'svc-version': SERVER_VERSION } };
  }
  const body = JSON.stringify(known.problem().toBody(to.instance));
  return {
    status,
    headers: { 'content-type': 'application/problem+json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'svc-version': SERVER_VERSION },
    body,
  };
}

/** nginx's code for a request it refused (`ERROR_PATH/<code>`): 494 is its name for headers over its buffers. */
export function nginxErrorStatus(url: string): RequestErrorStatus {
  const status = Number(url.slice(ERROR_PATH.length + 1));
  if (status === 494) return 431;
  return status === 413 || status === 414 ? status : 400;
}

/** A refusal nginx sent to ERROR_PATH (a GET with the Host and Accept of the refused request). */
export function answerNginxError(request: IncomingMessage, response: ServerResponse, isWorkspaceHost: (host: string | undefined) => boolean): void {
  const answer = requestErrorAnswer(nginxErrorStatus(request.url ?? ''), {
    workspaceHost: isWorkspaceHost(request.headers.host),
    accept: request.headers.accept,
  });
  response.writeHead(answer.status, answer.headers).end(answer.body);
}

/** A path with `%00`: nginx refuses it with 400 before it knows the host; svc alone does the same. */
export function hasEncodedNul(url: string | undefined): boolean {
  if (!url || !url.includes('%00')) return false;
  const queryAt = url.indexOf('?');
  return /%00/.test(queryAt < 0 ? url : url.slice(0, queryAt));
}

/** Answers such a request (Node data plane) with the 400 nginx gives it. */
export function refuseEncodedNul(request: IncomingMessage, response: ServerResponse, workspaceHost: boolean): void {
  const answer = requestErrorAnswer(400, { workspaceHost, accept: request.headers.accept, instance: workspaceHost ? undefined : request.url?.split('?')[0] });
  response.writeHead(answer.status, answer.headers).end(request.method === 'HEAD' ? undefined : answer.body);
  request.resume();
}

/** Answers an address over the router's limit (MAX_URL_LENGTH) on a console or API host with the 414 problem. */
export function refuseLongUrl(request: IncomingMessage, response: ServerResponse): void {
  const answer = requestErrorAnswer(414, { workspaceHost: false, accept: request.headers.accept, instance: request.url?.split('?')[0] });
  response.writeHead(answer.status, answer.headers).end(request.method === 'HEAD' ? undefined : answer.body);
  request.resume();
}

/** A header's value in the raw bytes of a request the parser refused (the Host of a request that never parsed). */
export function rawHeader(raw: Buffer | undefined, name: string): string | undefined {
  if (!raw) return undefined;
  const match = new RegExp(`\\r\\n${name}:[ \\t]*([^\\r\\n]*)`, 'i').exec(raw.toString('latin1'));
  return match?.[1].trim();
}

/**
 * Fastify's clientErrorHandler: Node's parser refused the request. The host comes from the raw bytes (best effort:
 * they are the chunk that failed). A client that was too slow or left gets no answer, as nginx does.
 */
export function clientErrorHandler(isWorkspaceHost: (host: string | undefined) => boolean) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const status: RequestErrorStatus = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket : undefined;
    const answer = requestErrorAnswer(status, { workspaceHost: isWorkspaceHost(rawHeader(raw, 'host')), accept: rawHeader(raw, 'accept') });
    const head = Object.entries({ ...answer.headers, connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${head}\r\n${answer.body}`);
  };
}

/** Fastify's frameworkErrors: its router refused the path before any route or hook ran. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const failure =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? problem('uri-too-long', 414, 'A part of the path is longer than this API accepts (200 characters).')
      : problem('bad-request', 400, 'The path is not valid percent-encoding (UTF-8).');
  sendProblem(reply, request, failure);
}

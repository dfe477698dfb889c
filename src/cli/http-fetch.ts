// The CLI's fetch: a Request sent with node:http (node:https for https addresses) and answered as a Response.
// Node's own fetch (undici) compiles its HTTP parser as WebAssembly, which costs a short command about 0.1 s: the
// loading, and a process that cannot exit until V8 has finished optimizing that code in the background
// (docs/cli.md, "Start-up"). Failures look like fetch's: a TypeError "fetch failed" whose `cause` is the network
// error, a body that breaks off errors with TypeError "terminated", an abort rejects with the signal's AbortError.
import http from 'node:http';
import type { IncomingMessage } from 'node:http';

/** Idle connections are kept for the next request of the same command, and never hold the process open. */
const agents: { http?: http.Agent; https?: http.Agent } = {};

async function agentFor(protocol: string): Promise<{ request: typeof http.request; agent: http.Agent }> {
  if (protocol === 'https:') {
    const https = await import('node:https');
    agents.https ??= new https.Agent({ keepAlive: true });
    return { request: https.request, agent: agents.https };
  }
  if (protocol !== 'http:') throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${protocol}`) });
  agents.http ??= new http.Agent({ keepAlive: true });
  return { request: http.request, agent: agents.http };
}

export async function httpFetch(request: Request): Promise<Response> {
  request.signal.throwIfAborted();
  const url = new URL(request.url);
  const { request: send, agent } = await agentFor(url.protocol);
  const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  if (body) headers['content-length'] = String(body.length);
  const incoming = await new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = send(url, { method: request.method, headers, agent, signal: request.signal }, resolve);
    outgoing.on('error', (error) => reject(error.name === 'AbortError' ? request.signal.reason ?? error : new TypeError('fetch failed', { cause: error })));
    outgoing.end(body);
  });
  const responseHeaders = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
  const status = incoming.statusCode ?? 0;
  const empty = request.method === 'HEAD' || status === 204 || status === 304;
  if (empty) incoming.resume();
  return new Response(empty ? null : bodyOf(incoming, request.signal), { status, statusText: incoming.statusMessage ?? '', headers: responseHeaders });
}

/** The answer's body as a web stream that reads from the socket as the reader asks. */
function bodyOf(incoming: IncomingMessage, signal: AbortSignal): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.pause();
      incoming.on('data', (chunk: Buffer) => {
        if (ended) return; // a chunk already read when the reader cancelled
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.on('end', () => {
        if (ended) return;
        ended = true;
        controller.close();
      });
      incoming.on('close', () => {
        if (!ended) controller.error(signal.aborted ? signal.reason : new TypeError('terminated', { cause: new Error('the connection closed before the answer ended') }));
      });
      incoming.on('error', () => undefined); // reported by 'close'
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      ended = true;
      incoming.destroy();
    },
  });
}

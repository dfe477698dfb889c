// The agent's built-in web editor: a file tree of the workspace, a file in a textarea, save. It serves on PORT
// (8443 in a pod) and is what the agent runs when the driver names no other editor command.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { editorPage } from './editor-page.ts';
import { listTree, MAX_FILE_BYTES, readWorkspaceFile, writeWorkspaceFile } from './editor-files.ts';
import { DEFAULT_EDITOR_PORT } from './protocol.ts';

export interface EditorServerOptions {
  /** The workspace directory (/data/app in a pod). */
  root: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
}

export interface EditorServer {
  port: number;
  close(): Promise<void>;
}

export async function startEditorServer(options: EditorServerOptions): Promise<EditorServer> {
  const server = http.createServer((request, response) => {
    serveEditorRequest(options.root, request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, 'text/plain; charset=utf-8', `The editor failed: ${(error as Error).message}`);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

async function serveEditorRequest(root: string, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://editor');
  const route = `${request.method} ${url.pathname}`;
  if (route === 'GET /') return send(response, 200, 'text/html; charset=utf-8', editorPage(`${path.basename(root)} - svc editor`));
  if (route === 'GET /api/tree') return send(response, 200, 'application/json', JSON.stringify(await listTree(root)));
  const filePath = url.searchParams.get('path') ?? '';
  if (route === 'GET /api/file') {
    const read = await readWorkspaceFile(root, filePath);
    return read.ok ? send(response, 200, 'text/plain; charset=utf-8', read.text) : send(response, read.status, 'text/plain; charset=utf-8', read.message);
  }
  if (route === 'PUT /api/file') {
    const body = await readBody(request, MAX_FILE_BYTES);
    if (body === undefined) return send(response, 413, 'text/plain; charset=utf-8', 'The file is too large to save here.');
    const written = await writeWorkspaceFile(root, filePath, body);
    return written.ok ? send(response, 204, 'text/plain', '') : send(response, 400, 'text/plain; charset=utf-8', written.message);
  }
  send(response, 404, 'text/plain; charset=utf-8', 'Not found.');
}

function send(response: http.ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(status === 204 ? undefined : body);
}

/** The request body as text, or undefined when it is longer than `limit` bytes. */
async function readBody(request: http.IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Run as a program (inside a pod): serve the workspace directory on PORT and HOST. */
async function main(): Promise<void> {
  const root = process.env.SVC_WORKSPACE_DIR ?? process.cwd();
  const port = Number(process.env.PORT ?? DEFAULT_EDITOR_PORT);
  const host = process.env.HOST ?? '0.0.0.0';
  const server = await startEditorServer({ root, host, port });
  console.log(`editor: serving ${root} on ${host}:${server.port}`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void server.close().then(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(`editor: ${(error as Error).message}`);
    process.exit(1);
  });
}

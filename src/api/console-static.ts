// The browser console (console/, React + Vite) as the server serves it on the console host: the build in
// console/dist, read once at start. Hashed files under /assets/ are cached for a year; every other path that no
// server route claims (/api/..., /cli-login, /openapi.yaml win) answers index.html with no-store and a strict CSP,
// so the console's client-side routes can be opened directly. Without a build the server keeps its minimal pages.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const CONSOLE_DIST = fileURLToPath(new URL('../../console/dist', import.meta.url));

/** Scripts and styles only from this origin, no inline code, no framing; the API and events on the same origin. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

interface ConsoleFile {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  /** Under /assets/: the name carries the content hash, so it never changes. */
  immutable: boolean;
}

export interface ConsoleBuild {
  index: ConsoleFile;
  /** By URL path (`/assets/index-abc123.js`, `/favicon.svg`). */
  files: Map<string, ConsoleFile>;
}

function fileOf(full: string, immutable: boolean): ConsoleFile {
  const body = readFileSync(full);
  const extension = path.extname(full);
  const gzip = COMPRESSIBLE.has(extension) && body.length > 1024 ? gzipSync(body) : undefined;
  return { body, gzip, type: TYPES[extension] ?? 'application/octet-stream', immutable };
}

/** Reads the build in `dir`; undefined when there is none (no index.html). */
export function loadConsoleBuild(dir: string): ConsoleBuild | undefined {
  const indexPath = path.join(dir, 'index.html');
  if (!existsSync(indexPath)) return undefined;
  const files = new Map<string, ConsoleFile>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && full !== indexPath) {
        const urlPath = `/${path.relative(dir, full).split(path.sep).join('/')}`;
        files.set(urlPath, fileOf(full, urlPath.startsWith('/assets/')));
      }
    }
  };
  walk(dir);
  return { index: fileOf(indexPath, false), files };
}

function send(request: FastifyRequest, reply: FastifyReply, file: ConsoleFile, cacheControl: string): FastifyReply {
  reply.type(file.type).header('x-content-type-options', 'nosniff').header('cache-control', cacheControl);
  if (file.gzip) {
    reply.header('vary', 'accept-encoding');
    if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('content-encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}

/**
 * Serves the console's build from `dir` (console/dist by default) and answers true; answers false, and logs how to
 * build it, when there is no build.
 */
export function registerConsoleApp(app: FastifyInstance, options: { dir?: string; log: (message: string) => void }): boolean {
  const dir = options.dir ?? CONSOLE_DIST;
  const build = loadConsoleBuild(dir);
  if (!build) {
    options.log(`console: no build in ${dir}, so the minimal pages are served; build the console with \`npm run console:build\` (npm run up and npm test do it)`);
    return false;
  }
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.url.split('?')[0];
    // The API's unknown paths stay problems; a missing asset is a 404, never the page.
    if (url.startsWith('/api/')) return reply.callNotFound();
    const file = build.files.get(url);
    if (file) return send(request, reply, file, file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (url.startsWith('/assets/')) return reply.callNotFound();
    // The page itself is never cached, so a new build is picked up at the next load.
    reply.header('content-security-policy', CONSOLE_CSP).header('referrer-policy', 'same-origin').header('x-frame-options', 'DENY');
    return send(request, reply, build.index, 'no-store');
  };
  const route = { config: { access: 'public' as const }, schema: { hide: true } };
  app.get('/', route, page);
  app.get('/*', route, page);
  return true;
}

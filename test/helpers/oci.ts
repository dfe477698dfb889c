// Real OCI parts for tests, offline: Debian's docker-registry on a loopback port in a temporary directory (with
// htpasswd basic auth when asked), and images built from busybox-static with umoci and pushed with skopeo
// (/work/shared/notes/recipes.md, "OCI images without Docker"). Each layer is a directory staged by the test and
// added verbatim (`umoci raw add-layer`), so whiteouts (`.wh.<name>`, `.wh..wh..opq`) are written as they are.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Header } from 'tar';

const run = promisify(execFile);

export interface TestRegistry {
  /** `127.0.0.1:PORT`: the registry part of image references. */
  host: string;
  /** How many times the registry answered a GET of this blob with 200 (from its access log). */
  blobGets(digest: string): Promise<number>;
  /** How many times the repository's manifest was sent by this tag or digest. */
  manifestGets(repository: string, tagOrDigest: string): Promise<number>;
  close(): Promise<void>;
}

export interface RegistryOptions {
  /** Requires these credentials (htpasswd, bcrypt) for everything. */
  basicAuth?: { username: string; password: string };
}

export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-registry-'));
  const auth: string[] = [];
  if (options.basicAuth) {
    const { stdout } = await run('htpasswd', ['-Bbn', options.basicAuth.username, options.basicAuth.password]);
    await writeFile(path.join(dir, 'htpasswd'), stdout.trim() + '\n');
    auth.push('auth:', '  htpasswd:', '    realm: svc-test', `    path: ${dir}/htpasswd`);
  }
  const config = ['version: 0.1', 'log:', '  level: info', 'storage:', '  filesystem:', `    rootdirectory: ${dir}/data`, '  delete:', '    enabled: true', 'http:', '  addr: 127.0.0.1:0', ...auth];
  await writeFile(path.join(dir, 'registry.yml'), config.join('\n') + '\n');
  const child = spawn('docker-registry', ['serve', path.join(dir, 'registry.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const host = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      log += chunk;
      const match = /listening on (127\.0\.0\.1:\d+)/.exec(log);
      if (match) resolve(match[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`docker-registry exited with ${code}:\n${log}`)));
  });
  return {
    host,
    async blobGets(digest) {
      return [...log.matchAll(/"GET \/v2\/\S+\/blobs\/(sha256:[a-f0-9]{64}) HTTP\/1\.1" 200/g)].filter((m) => m[1] === digest).length;
    },
    async manifestGets(repository, tagOrDigest) {
      return [...log.matchAll(/"GET \/v2\/(\S+)\/manifests\/(\S+) HTTP\/1\.1" 200/g)].filter((m) => m[1] === repository && m[2] === tagOrDigest).length;
    },
    async close() {
      await stop(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** A layer's contents: a string is a file (mode 0644), or an explicit kind. `.wh.` names are whiteouts. */
export type LayerEntry = string | { content: string; mode: number } | { symlink: string } | { hardlink: string } | { dir: true; mode?: number } | { busybox: true };

export interface ImageSpec {
  /** Lowest first: staged files, or a raw uncompressed tar. */
  layers: (Record<string, LayerEntry> | Buffer)[];
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workdir?: string;
  user?: string;
  ports?: string[];
  architecture?: string;
  /** How skopeo stores the image: OCI (default) or Docker v2 schema 2. */
  format?: 'oci' | 'v2s2';
  /** Layer compression in the registry (default gzip). */
  compression?: 'gzip' | 'zstd';
  /** Sends these credentials to the registry when pushing. */
  credentials?: { username: string; password: string };
}

/** Builds an image offline and pushes it as `<registry>/<name>`; answers the manifest's digest. */
export async function pushImage(registry: TestRegistry, name: string, spec: ImageSpec): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-image-'));
  try {
    const layout = path.join(dir, 'layout');
    await run('umoci', ['init', '--layout', layout]);
    await run('umoci', ['new', '--image', `${layout}:img`]);
    for (const [i, layer] of spec.layers.entries()) {
      const stage = path.join(dir, `stage${i}`);
      if (Buffer.isBuffer(layer)) await writeFile(`${stage}.tar`, layer);
      else {
        await stageLayer(stage, layer);
        await run('tar', ['--numeric-owner', '--owner=0', '--group=0', '--mtime=@0', '--sort=name', '-C', stage, '-cf', `${stage}.tar`, '.']);
      }
      await run('umoci', ['raw', 'add-layer', '--image', `${layout}:img`, `${stage}.tar`]);
    }
    const config: string[] = [];
    if (spec.entrypoint) config.push(...spec.entrypoint.map((e) => `--config.entrypoint=${e}`));
    if (spec.cmd) config.push(...spec.cmd.map((c) => `--config.cmd=${c}`));
    for (const env of spec.env ?? []) config.push(`--config.env=${env}`);
    if (spec.workdir) config.push(`--config.workingdir=${spec.workdir}`);
    if (spec.user) config.push(`--config.user=${spec.user}`);
    for (const port of spec.ports ?? []) config.push(`--config.exposedports=${port}`);
    if (spec.architecture) config.push(`--architecture=${spec.architecture}`);
    if (config.length > 0) await run('umoci', ['config', '--image', `${layout}:img`, ...config]);
    const digestFile = path.join(dir, 'digest');
    const args = ['copy', '--quiet', '--dest-tls-verify=false', '--digestfile', digestFile];
    if (spec.format === 'v2s2') args.push('--format', 'v2s2');
    if (spec.compression === 'zstd') args.push('--dest-compress', '--dest-compress-format', 'zstd');
    if (spec.credentials) args.push('--dest-creds', `${spec.credentials.username}:${spec.credentials.password}`);
    await run('skopeo', [...args, `oci:${layout}:img`, `docker://${registry.host}/${name}`]);
    return (await readFile(digestFile, 'utf8')).trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function stageLayer(stage: string, layer: Record<string, LayerEntry>): Promise<void> {
  await mkdir(stage, { recursive: true });
  const dirs: [string, number][] = [];
  for (const [name, entry] of Object.entries(layer)) {
    const at = path.join(stage, name);
    await mkdir(path.dirname(at), { recursive: true });
    if (typeof entry === 'string') await writeFile(at, entry, { mode: 0o644 });
    else if ('busybox' in entry) await writeFile(at, await readFile('/usr/bin/busybox'), { mode: 0o755 });
    else if ('content' in entry) {
      await writeFile(at, entry.content);
      await chmod(at, entry.mode);
    } else if ('symlink' in entry) await symlink(entry.symlink, at);
    else if ('hardlink' in entry) await link(path.join(stage, entry.hardlink), at);
    else {
      await mkdir(at, { recursive: true });
      if (entry.mode !== undefined) dirs.push([at, entry.mode]);
    }
  }
  for (const [at, mode] of dirs) await chmod(at, mode);
}

/** Puts an image index (manifest list) under a tag: `entries` are manifests of the repository with their platform. */
export async function pushIndex(registry: TestRegistry, repository: string, tag: string, entries: { digest: string; architecture: string }[]): Promise<string> {
  const manifests = await Promise.all(
    entries.map(async (entry) => {
      const answer = await fetch(`http://${registry.host}/v2/${repository}/manifests/${entry.digest}`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } });
      const size = (await answer.arrayBuffer()).byteLength;
      return { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: entry.digest, size, platform: { os: 'linux', architecture: entry.architecture } };
    }),
  );
  const body = JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests });
  const answer = await fetch(`http://${registry.host}/v2/${repository}/manifests/${tag}`, { method: 'PUT', headers: { 'content-type': 'application/vnd.oci.image.index.v1+json' }, body });
  if (answer.status !== 201) throw new Error(`pushing the index answered ${answer.status}: ${await answer.text()}`);
  return answer.headers.get('docker-content-digest')!;
}

/** The layer blob digests of a manifest in the registry, lowest first. */
export async function layerDigests(registry: TestRegistry, repository: string, manifestDigest: string): Promise<string[]> {
  const answer = await fetch(`http://${registry.host}/v2/${repository}/manifests/${manifestDigest}`, {
    headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
  });
  return ((await answer.json()) as { layers: { digest: string }[] }).layers.map((layer) => layer.digest);
}

export interface RegistryProxy {
  /** `127.0.0.1:PORT`: use it as the registry host of references. */
  host: string;
  /** Token requests seen, with whether they carried the right basic credentials. */
  tokenRequests: { authenticated: boolean; scope: string | null }[];
  /** Blob downloads being trickled now (`trickleBlobs`). */
  readonly trickling: number;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Speak the distribution token flow: every /v2/ request needs a Bearer token from /token (the 401 names it). */
  token?: { username: string; password: string; anonymous?: boolean };
  /** Flip the last byte of every blob it passes on (a registry or cache that sends the wrong bytes). */
  corruptBlobs?: boolean;
  /** Answer blob requests with a 307 to the registry itself (another origin, like blob storage on a CDN). */
  redirectBlobs?: boolean;
  /** Send these blobs one byte a second (headers at once, with their full length), as a registry that stalls. */
  trickleBlobs?: string[];
}

/** A loopback front of a registry: the token flow, blobs with wrong bytes or trickled; the rest passes unchanged. */
export async function startRegistryProxy(registry: TestRegistry, options: ProxyOptions): Promise<RegistryProxy> {
  const token = `t-${Math.random().toString(36).slice(2)}`;
  const tokenRequests: RegistryProxy['tokenRequests'] = [];
  let trickling = 0;
  const server = http.createServer((request, response) => {
    const url = new URL(request.url!, 'http://proxy');
    const auth = options.token;
    if (auth && url.pathname === '/token') {
      const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
      const authenticated = request.headers.authorization === expected;
      tokenRequests.push({ authenticated, scope: url.searchParams.get('scope') });
      if (!authenticated && !(auth.anonymous && !request.headers.authorization)) {
        response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
      return;
    }
    if (auth && request.headers.authorization !== `Bearer ${token}`) {
      const address = server.address() as { port: number };
      response.writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': `Bearer realm="http://127.0.0.1:${address.port}/token",service="test-registry",scope="repository:${url.pathname.split('/').slice(2, -2).join('/')}:pull"`,
      });
      response.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }));
      return;
    }
    if (options.redirectBlobs && url.pathname.includes('/blobs/')) {
      response.writeHead(307, { location: `http://${registry.host}${request.url}` }).end();
      return;
    }
    const headers = { ...request.headers };
    delete headers.authorization;
    const upstream = http.request(`http://${registry.host}${request.url}`, { method: request.method, headers }, (answer) => {
      const blob = /\/blobs\/(sha256:[a-f0-9]{64})$/.exec(url.pathname)?.[1];
      if (blob && options.trickleBlobs?.includes(blob) && answer.statusCode === 200 && request.method === 'GET') {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          response.writeHead(200, { ...answer.headers, 'content-length': String(body.length) });
          trickling++;
          let sent = 0;
          const timer = setInterval(() => (sent < body.length ? response.write(body.subarray(sent, ++sent)) : response.end()), 1000);
          response.on('close', () => {
            clearInterval(timer);
            trickling--;
          });
        });
        return;
      }
      if (!(options.corruptBlobs && url.pathname.includes('/blobs/') && answer.statusCode === 200)) {
        response.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(response);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        if (body.length > 0) body[body.length - 1] ^= 0xff;
        response.writeHead(200, answer.headers).end(body);
      });
    });
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as { port: number }).port}`,
    tokenRequests,
    get trickling() {
      return trickling;
    },
    close: () => {
      server.closeAllConnections(); // trickles never end by themselves
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An uncompressed tar with raw entries (names GNU tar would not write, like `../x`), for hostile-layer tests. */
export function rawTar(entries: { path: string; type?: 'File' | 'SymbolicLink' | 'Link'; content?: string; linkpath?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.content ?? '');
    const header = new Header({ path: entry.path, type: entry.type ?? 'File', size: entry.type && entry.type !== 'File' ? 0 : body.length, mode: 0o644, linkpath: entry.linkpath, mtime: new Date(0), uid: 0, gid: 0 });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (!entry.type || entry.type === 'File') blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

// The nginx data plane (`--data-plane nginx`, docs/decisions.md "Router performance"): Debian's nginx is the public
// listener; svc listens on loopback behind it. nginx proxies everything to svc (console, API, and every workspace
// request it cannot serve itself), and serves the workspace routes svc lists in its map (nginx-map.ts) directly,
// after asking svc about admission with auth_request. svc rewrites the map and reloads nginx when routes change.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { emptyWorkspaceMap, workspaceMap } from './nginx-map.ts';
import type { WorkspaceRouting } from './workspace-routes.ts';

const run = promisify(execFile);

/** The path on svc's internal listener that nginx's auth_request asks, with the secret of this start. */
export const AUTH_PATH = '/.svc-internal/admit';
export const ADMIT_SECRET_HEADER = 'x-svc-admit';
/** The header nginx sets to the client's address; svc trusts it only from loopback. */
export const CLIENT_HEADER = 'x-real-ip';

export interface NginxSettings {
  /** Where clients connect. */
  listenHost: string;
  listenPort: number;
  /** svc's own listener on loopback. */
  internalPort: number;
  /** svc's upstream timeout: nginx gives up on a directly served upstream after it too (svc then answers). */
  upstreamTimeoutSeconds: number;
  /** The directory for the configuration, pid file, logs and temp files. */
  dir: string;
  /** Proves to svc that an admission request comes from this nginx. */
  admitSecret: string;
  /** The user workers run as when svc runs as root. */
  workerUser?: string;
}

/** Debian's nginx, installed with apt when missing and svc runs as root; an error saying what to do otherwise. */
export async function ensureNginx(log: (m: string) => void): Promise<string> {
  const found = await run('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx']).then((r) => r.stdout.trim().split('\n')[0], () => '');
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error('nginx is needed: install it (apt-get install nginx, or scripts/setup.sh) or run as root to have it installed');
  log('installing nginx (Debian)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'nginx'], { env });
  try {
    await install().catch(async () => {
      await run('apt-get', ['update', '-qq'], { env });
      await install();
    });
  } catch (error) {
    throw new Error(`installing nginx failed: ${(error as Error).message}`);
  }
  return '/usr/sbin/nginx';
}

const RELOAD_DELAY_MS = 100;

const quoteHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** The whole configuration; `workspaceMap` is the generated part (upstreams and maps, see nginx-map.ts). */
export function nginxConfig(settings: NginxSettings, workspaceMap: string): string {
  const { dir } = settings;
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${path.join(dir, 'temp', name)};`).join('\n');
  return `${settings.workerUser ? `user ${settings.workerUser};\n` : ''}worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  log_format svc '$host $request_uri $status route=$svc_route upstream=$upstream_addr';
  ${process.env.SVC_NGINX_ACCESS_LOG ? `access_log ${process.env.SVC_NGINX_ACCESS_LOG} svc;` : 'access_log off;'}
${temp}
  # svc keeps its own limits and answers them with its pages.
  client_max_body_size 0;
  large_client_header_buffers 4 64k;
  proxy_http_version 1.1;
  proxy_buffering off;
  proxy_request_buffering off;
  proxy_read_timeout 3600s;
  proxy_send_timeout 3600s;
  proxy_set_header Host $http_host;
  proxy_set_header Upgrade $http_upgrade;
  proxy_set_header Connection $svc_connection;
  proxy_set_header X-Real-IP $remote_addr;
  proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
  proxy_set_header X-Forwarded-Host "";
  proxy_set_header X-Forwarded-Proto "";
  map $http_upgrade $svc_connection { default upgrade; "" ""; }
  upstream svc { server 127.0.0.1:${settings.internalPort}; keepalive 64; }
${workspaceMap}
  server {
    listen ${quoteHost(settings.listenHost)}:${settings.listenPort} default_server;
    server_name _;
    location / {
      if ($svc_route) { rewrite ^ /.svc-direct last; }
      proxy_pass http://svc;
    }
    location = /.svc-direct {
      internal;
      auth_request ${AUTH_PATH}-ask;
      error_page 401 403 404 500 502 503 504 = @svc;
      proxy_read_timeout ${settings.upstreamTimeoutSeconds}s;
      proxy_set_header Host $http_host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $svc_connection;
      proxy_set_header Svc-Authorization "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header Cookie $svc_cookie;
      proxy_pass http://$svc_route$svc_target;
    }
    location = ${AUTH_PATH}-ask {
      internal;
      proxy_pass http://svc${AUTH_PATH};
      proxy_pass_request_body off;
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_set_header Content-Length "";
      proxy_set_header X-Real-IP $remote_addr;
      proxy_set_header X-Svc-Method $request_method;
      proxy_set_header X-Svc-Uri $request_uri;
      proxy_set_header X-Svc-Length $content_length;
      proxy_set_header X-Svc-Route $svc_route;
      proxy_set_header X-Svc-Admit ${settings.admitSecret};
    }
    location @svc {
      proxy_pass http://svc$request_uri;
    }
  }
}
`;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something answers HTTP on host:port (any status). */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get({ host, port, path: '/', agent: false, timeout: 1000, headers: { host: 'svc-probe.invalid' } }, (response) => {
      response.resume();
      resolve(true);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** nginx run by svc: started in front of svc's internal listener, reloaded with a new map, stopped with svc. */
export class NginxDataPlane {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private settings?: NginxSettings;
  private stderr = '';
  private readonly stopOnExit = () => this.child?.kill('SIGTERM');
  private readonly routings = new Map<number, WorkspaceRouting>();
  private loaded = emptyWorkspaceMap;
  private pending?: NodeJS.Timeout;

  constructor(
    private readonly workspaceDomain: string,
    private readonly log: (m: string) => void,
  ) {}

  /** A workspace's routing as svc loaded it: the map follows within RELOAD_DELAY_MS (one reload for a burst). */
  routingChanged(id: number, routing: WorkspaceRouting | undefined): void {
    if (routing?.row.state === 'running') this.routings.set(id, routing);
    else if (!this.routings.delete(id)) return;
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      const text = workspaceMap(this.routings.values(), this.workspaceDomain);
      if (text === this.loaded) return;
      this.loaded = text;
      this.reload(text).catch((error: Error) => this.log(`data plane: nginx reload failed: ${error.message}`));
    }, RELOAD_DELAY_MS);
  }

  /** Starts nginx; the port it listens on (a free one when `listenPort` is 0). */
  async start(options: { listenHost: string; listenPort: number; internalPort: number; upstreamTimeoutSeconds: number; admitSecret: string }): Promise<number> {
    const binary = await ensureNginx(this.log);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-nginx-'));
    const root = process.getuid?.() === 0;
    await mkdir(path.join(dir, 'temp'), { recursive: true, mode: 0o755 });
    const port = options.listenPort || (await freePort(options.listenHost));
    this.settings = { ...options, listenPort: port, dir, workerUser: root ? 'nobody nogroup' : undefined };
    if (root) {
      // Workers (not root) write request bodies they buffer there.
      const { stdout } = await run('id', ['-u', 'nobody']);
      const nobody = Number(stdout.trim());
      for (const name of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) {
        await mkdir(path.join(dir, 'temp', name), { recursive: true });
        await chown(path.join(dir, 'temp', name), nobody, nobody);
      }
      await run('chmod', ['755', dir]);
    }
    await this.writeConfig(emptyWorkspaceMap);
    const child = spawn(binary, ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    child.stderr!.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    this.exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    process.once('exit', this.stopOnExit);
    const deadline = Date.now() + 10_000;
    while (!(await answers(options.listenHost === '0.0.0.0' ? '127.0.0.1' : options.listenHost, port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        await this.stop();
        throw new Error(`--data-plane nginx: nginx did not start on ${options.listenHost}:${port}: ${this.stderr.trim()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return port;
  }

  private async writeConfig(workspaceMap: string): Promise<void> {
    const settings = this.settings!;
    await writeFile(path.join(settings.dir, 'nginx.conf'), nginxConfig(settings, workspaceMap));
  }

  /** A new workspace map: written, checked by nginx, then loaded (SIGHUP, as `nginx -s reload` sends). */
  async reload(workspaceMap: string): Promise<void> {
    if (!this.child || !this.settings) return;
    await this.writeConfig(workspaceMap);
    this.child.kill('SIGHUP');
  }

  async stop(): Promise<void> {
    clearTimeout(this.pending);
    process.off('exit', this.stopOnExit);
    if (this.child && this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      await this.exited;
    }
    this.child = undefined;
    if (this.settings) await rm(this.settings.dir, { recursive: true, force: true });
  }
}

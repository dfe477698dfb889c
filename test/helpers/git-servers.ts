// Private git servers for credential tests, real parts on loopback: git's smart HTTP (`git http-backend`) behind
// nginx with basic auth, and OpenSSH's sshd serving a repository to one authorized key.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BareRepository } from './git.ts';
import { until } from './wait.ts';

const run = promisify(execFile);

export interface PrivateGitServer {
  /** The clone URL of the repository. */
  url: string;
  /** The host as credentials name it (`<address>:<port>`). */
  host: string;
  /** What the server's own log says (nginx's access and error log; sshd's log). */
  log(): Promise<string>;
  close(): Promise<void>;
}

async function freePort(address: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port: number, address: string): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect(port, address, () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(undefined));
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** `git http-backend` as CGI behind a small HTTP server: nginx in front checks the password and names the user. */
function startHttpBackend(projectRoot: string): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method,
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        REMOTE_USER: String(request.headers['x-remote-user'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'safe.directory',
        GIT_CONFIG_VALUE_0: '*',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(cgi.stdin);
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    cgi.on('close', () => {
      const output = Buffer.concat(chunks);
      const split = output.indexOf('\r\n\r\n') >= 0 ? output.indexOf('\r\n\r\n') : output.indexOf('\n\n');
      const gap = output.indexOf('\r\n\r\n') >= 0 ? 4 : 2;
      const head = output.subarray(0, split).toString().split(/\r?\n/);
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head) {
        const [name, ...rest] = line.split(':');
        if (name.toLowerCase() === 'status') status = Number(rest.join(':').trim().split(' ')[0]);
        else if (name) headers[name] = rest.join(':').trim();
      }
      response.writeHead(status, headers).end(output.subarray(split + gap));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/**
 * The bare repository served over git's smart HTTP at `http://<address>:<port>/repo.git`, only to `username` with
 * `password` (nginx's auth_basic); pushes are accepted (git http-backend takes them from an authenticated user).
 * `address` defaults to 127.0.0.1; as root, pods (and the clone at create) reach only an address the egress allows.
 */
export async function startHttpGitServer(repository: BareRepository, account: { username: string; password: string }, address = '127.0.0.1'): Promise<PrivateGitServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-git-http-'));
  await chmod(dir, 0o755);
  await run('git', ['config', 'http.receivepack', 'true'], { cwd: repository.path });
  const backend = await startHttpBackend(path.dirname(repository.path));
  const backendPort = (backend.address() as AddressInfo).port;
  const { stdout: hashed } = await run('htpasswd', ['-nb', account.username, account.password]);
  await writeFile(path.join(dir, 'htpasswd'), hashed, { mode: 0o644 });
  await mkdir(path.join(dir, 'temp'), { mode: 0o777 });
  const port = await freePort(address);
  const conf = path.join(dir, 'nginx.conf');
  await writeFile(
    conf,
    `${process.getuid?.() === 0 ? 'user root root;\n' : ''}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/temp/body; proxy_temp_path ${dir}/temp/proxy; fastcgi_temp_path ${dir}/temp/fastcgi;
  uwsgi_temp_path ${dir}/temp/uwsgi; scgi_temp_path ${dir}/temp/scgi;
  client_max_body_size 0;
  server {
    listen ${address}:${port};
    location / {
      auth_basic "git";
      auth_basic_user_file ${dir}/htpasswd;
      proxy_set_header X-Remote-User $remote_user;
      proxy_request_buffering off;
      proxy_pass http://127.0.0.1:${backendPort};
    }
  }
}
`,
  );
  const nginx = spawn('nginx', ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
  await until(() => listening(port, address), `nginx on port ${port}`, 20_000);
  const host = `${address}:${port}`;
  return {
    url: `http://${host}/${path.basename(repository.path)}`,
    host,
    log: async () => (await run('cat', [path.join(dir, 'access.log'), path.join(dir, 'error.log')]).catch(() => ({ stdout: '' }))).stdout,
    async close() {
      await stopChild(nginx);
      backend.closeAllConnections();
      await new Promise((resolve) => backend.close(resolve));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The bare repository served by sshd on a loopback port to one public key (`authorizedKey`, an `ssh-ed25519 …`
 * line), as root: `ssh://root@<address>:<port><path>` (127.0.0.1 by default). Its own host key, configuration and
 * authorized keys file.
 */
export async function startSshGitServer(repository: BareRepository, authorizedKey: string, address = '127.0.0.1'): Promise<PrivateGitServer & { setAuthorizedKey(key: string): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-git-ssh-'));
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  const authorized = path.join(dir, 'authorized_keys');
  const setAuthorizedKey = (key: string) => writeFile(authorized, `restrict ${key}\n`, { mode: 0o600 });
  await setAuthorizedKey(authorizedKey);
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await freePort(address);
  const conf = path.join(dir, 'sshd_config');
  await writeFile(
    conf,
    `ListenAddress ${address}
Port ${port}
HostKey ${dir}/host_key
PidFile ${dir}/sshd.pid
AuthorizedKeysFile ${authorized}
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers root
LogLevel VERBOSE
SetEnv GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=*
`,
  );
  const logFile = path.join(dir, 'sshd.log');
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-f', conf, '-E', logFile], { stdio: 'ignore' });
  await until(() => listening(port, address), `sshd on port ${port}`, 20_000);
  const host = `${address}:${port}`;
  return {
    url: `ssh://root@${host}${repository.path}`,
    host,
    setAuthorizedKey,
    log: async () => (await run('cat', [logFile]).catch(() => ({ stdout: '' }))).stdout,
    async close() {
      await stopChild(sshd);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// An "internet" host for tests (root only): a network namespace of its own at an address of the documentation range
// 198.51.100.0/24 (never 203.0.113.0/24, where this machine reaches its package registries), linked to the host by
// a veth pair with a /31, serving over HTTP on port 80 a directory of files, an npm registry (static packuments and
// tarballs) and git repositories (git http-backend: clone and push; a repository may ask for basic auth), with a DNS
// server (dnsmasq, port 53) that answers its name, and on demand OpenSSH's sshd (port 22) serving the same
// repositories to the keys it is given. Pods reach it through the host as they reach the internet. Names of the namespace and link are
// random per instance, and so is the address unless given: tests running at the same time do not meet.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { until } from './wait.ts';

const run = promisify(execFile);

export interface InternetHost {
  /** Its address (198.51.100.x). */
  address: string;
  /** Its DNS name, answered by its own resolver at `address`:53 (give the pods that resolver: `podDns`). */
  name: string;
  /** `http://<name>` */
  url: string;
  /** The npm registry's URL: `http://<name>/npm/`. */
  registry: string;
  /** Files it serves: `url + '/files/' + path`. */
  files: string;
  /** Publishes a package of `files` (package.json made from name and version) in the registry. */
  publishPackage(name: string, version: string, files: Record<string, string>): Promise<void>;
  /**
   * A bare repository of `files` on branch main, cloned and pushed at `url + '/git/<name>.git'`; its path. With
   * `account`, HTTP serves it only to that user and password (basic auth; 401 otherwise) and names them to git.
   */
  addRepository(name: string, files: Record<string, string>, options?: { account?: { username: string; password: string } }): Promise<{ url: string; path: string }>;
  /** sshd on port 22 (started at the first call), serving the repositories as root to the keys authorized. */
  startSsh(): Promise<InternetSsh>;
  /** Another address answered by the same host (a route to it from the host): 169.254.169.254, a private one. */
  addAddress(address: string): Promise<void>;
  close(): Promise<void>;
}

export interface InternetSsh {
  /** `ssh://root@<name>/<path of the bare repository>` */
  urlOf(repositoryPath: string): string;
  /** Replaces the authorized keys (`ssh-ed25519 …` lines). */
  authorize(keys: string[]): Promise<void>;
  /** sshd's log (LogLevel VERBOSE: which key was accepted). */
  log(): Promise<string>;
}

export interface InternetHostOptions {
  /** An even last octet of 198.51.100.0/24 (the host's end of the link takes the next one); random when absent. */
  address?: string;
  /** Default `internet-<random>.test`. */
  name?: string;
}

// The HTTP server inside the namespace: /files/ and /npm/ from the directory (a directory's index.json for a
// packument), /git/ through git http-backend (receive-pack on: pushes are taken), behind basic auth for the
// repositories named in accounts.json ({ "<name>.git": "<base64 of user:password>" }, read at each request).
const SERVER = `
const http = require('node:http'); const fs = require('node:fs'); const path = require('node:path'); const { spawn } = require('node:child_process');
const root = process.argv[1];
http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const pathname = decodeURIComponent(url.pathname);
  if (pathname.startsWith('/git/')) {
    const accounts = JSON.parse(fs.readFileSync(path.join(root, 'accounts.json'), 'utf8'));
    const account = accounts[pathname.split('/')[2]];
    let remoteUser = 'tester';
    if (account) {
      const given = /^Basic (.+)$/.exec(req.headers.authorization || '');
      if (!given || given[1] !== account) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('unauthorized');
      remoteUser = Buffer.from(account, 'base64').toString().split(':')[0];
    }
    const cgi = spawn('git', ['http-backend'], { env: { GIT_PROJECT_ROOT: path.join(root, 'git'), GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: pathname.slice(4),
      REQUEST_METHOD: req.method, QUERY_STRING: url.search.slice(1), CONTENT_TYPE: req.headers['content-type'] || '', ...(req.headers['content-length'] ? { CONTENT_LENGTH: req.headers['content-length'] } : {}), REMOTE_USER: remoteUser, REMOTE_ADDR: req.socket.remoteAddress,
      GIT_HTTP_RECEIVE_PACK: '1', HTTP_CONTENT_ENCODING: req.headers['content-encoding'] || '', PATH: process.env.PATH, HOME: root } });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0); let sent = false;
    cgi.stdout.on('data', (chunk) => {
      if (sent) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\\r\\n\\r\\n');
      if (end < 0) return;
      let status = 200; const headers = {};
      for (const line of head.subarray(0, end).toString().split('\\r\\n')) {
        const i = line.indexOf(':'); const key = line.slice(0, i).trim(); const value = line.slice(i + 1).trim();
        if (key.toLowerCase() === 'status') status = Number(value.split(' ')[0]); else headers[key] = value;
      }
      res.writeHead(status, headers); sent = true; res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
    return;
  }
  let file = path.join(root, path.normalize(pathname));
  if (!file.startsWith(root + '/')) return void res.writeHead(404).end();
  fs.stat(file, (error, info) => {
    if (!error && info.isDirectory()) file = path.join(file, 'index.json');
    fs.readFile(file, (error, body) => {
      if (error) return void res.writeHead(404).end('not found');
      res.writeHead(200, { 'content-type': file.endsWith('.json') ? 'application/json' : 'application/octet-stream' }).end(body);
    });
  });
}).listen(80, process.argv[2], () => console.log('listening'));
`;

export async function startInternetHost(options: InternetHostOptions = {}): Promise<InternetHost> {
  const id = randomBytes(3).toString('hex');
  const address = options.address ?? `198.51.100.${10 + 2 * Math.floor(Math.random() * 115)}`;
  const last = Number(address.split('.')[3]);
  if (!address.startsWith('198.51.100.') || last % 2 !== 0 || last > 252) throw new Error(`the internet host's address must be 198.51.100.<even>, got ${address}`);
  const hostEnd = `198.51.100.${last + 1}`;
  const name = options.name ?? `internet-${id}.test`;
  const netns = `svc-inet-${id}`;
  const [outer, inner] = [`vi${id}`, 'eth0'];
  const root = await mkdtemp(path.join(os.tmpdir(), 'svc-internet-'));
  await run('chmod', ['755', root]);
  for (const dir of ['files', 'npm', 'git']) await mkdir(path.join(root, dir));
  await writeFile(path.join(root, 'accounts.json'), '{}');
  const accounts: Record<string, string> = {};
  const children: ChildProcess[] = [];
  const routes: string[] = [];
  const ip = (...args: string[]) => run('ip', args);
  const close = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    for (const route of routes) await ip('route', 'del', route, 'dev', outer).catch(() => undefined);
    await ip('link', 'del', outer).catch(() => undefined);
    await ip('netns', 'del', netns).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  };
  try {
    await ip('netns', 'add', netns);
    await ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner, 'netns', netns);
    await ip('addr', 'add', `${hostEnd}/31`, 'dev', outer);
    await ip('link', 'set', outer, 'up');
    await ip('-n', netns, 'addr', 'add', `${address}/31`, 'dev', inner);
    await ip('-n', netns, 'link', 'set', inner, 'up');
    await ip('-n', netns, 'link', 'set', 'lo', 'up');
    await ip('-n', netns, 'route', 'add', 'default', 'via', hostEnd);
    const inside = (file: string, args: string[]) => spawn('nsenter', [`--net=/run/netns/${netns}`, '--', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const web = inside(process.execPath, ['-e', SERVER, root, '0.0.0.0']);
    children.push(web);
    const dns = inside('dnsmasq', ['-k', '--conf-file=/dev/null', '--no-hosts', '--no-resolv', '--port=53', `--listen-address=${address}`, '--bind-interfaces', '--pid-file=', '--user=root', `--address=/${name}/${address}`]);
    children.push(dns);
    let stderr = '';
    for (const child of children) child.stderr!.on('data', (chunk) => (stderr += chunk));
    await until(async () => {
      if (children.some((child) => child.exitCode !== null)) throw new Error(`the internet host's servers exited: ${stderr}`);
      const answers = await new Promise<boolean>((resolve) => net.connect(80, address).on('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).on('error', () => resolve(false)));
      if (!answers) return undefined;
      const { stdout } = await run('nsenter', [`--net=/run/netns/${netns}`, '--', 'getent', 'hosts', name]).catch(() => ({ stdout: '' }));
      return stdout || (await dnsAnswers(address, name)) ? true : undefined;
    }, 'the internet host to serve', 20_000);
  } catch (error) {
    await close();
    throw error;
  }
  const url = `http://${name}`;
  let ssh: Promise<InternetSsh> | undefined;
  return {
    address,
    name,
    url,
    registry: `${url}/npm/`,
    files: path.join(root, 'files'),
    async publishPackage(pkg, version, files) {
      const work = await mkdtemp(path.join(root, 'pack-'));
      await mkdir(path.join(work, 'package'));
      await writeFile(path.join(work, 'package', 'package.json'), JSON.stringify({ name: pkg, version, main: 'index.js' }));
      for (const [file, text] of Object.entries(files)) await writeFile(path.join(work, 'package', file), text);
      const tarballName = `${pkg}-${version}.tgz`;
      await mkdir(path.join(root, 'npm', pkg, '-'), { recursive: true });
      const tarball = path.join(root, 'npm', pkg, '-', tarballName);
      await run('tar', ['-czf', tarball, '-C', work, 'package']);
      const bytes = await readFile(tarball);
      const packument = {
        name: pkg,
        'dist-tags': { latest: version },
        versions: {
          [version]: {
            name: pkg,
            version,
            main: 'index.js',
            dist: {
              tarball: `${url}/npm/${pkg}/-/${tarballName}`,
              shasum: createHash('sha1').update(bytes).digest('hex'),
              integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
            },
          },
        },
      };
      await writeFile(path.join(root, 'npm', pkg, 'index.json'), JSON.stringify(packument));
      await rm(work, { recursive: true, force: true });
    },
    async addRepository(repo, files, options = {}) {
      const work = await mkdtemp(path.join(root, 'work-'));
      const bare = path.join(root, 'git', `${repo}.git`);
      const git = (cwd: string, ...args: string[]) => run('git', ['-c', 'user.name=internet', '-c', 'user.email=internet@example.test', ...args], { cwd });
      await git(root, 'init', '-q', '--bare', '-b', 'main', bare);
      await git(work, 'init', '-q', '-b', 'main');
      for (const [file, text] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(work, file)), { recursive: true });
        await writeFile(path.join(work, file), text);
      }
      await git(work, 'add', '-A');
      await git(work, 'commit', '-q', '-m', 'first');
      await git(work, 'push', '-q', bare, 'main');
      await git(bare, 'config', 'http.receivepack', 'true');
      await rm(work, { recursive: true, force: true });
      await run('chmod', ['-R', 'a+rwX', bare]);
      if (options.account) {
        accounts[`${repo}.git`] = Buffer.from(`${options.account.username}:${options.account.password}`).toString('base64');
        await writeFile(path.join(root, 'accounts.json'), JSON.stringify(accounts));
      }
      return { url: `${url}/git/${repo}.git`, path: bare };
    },
    startSsh() {
      ssh ??= startSshInside(root, netns, address, name, (child) => children.push(child));
      return ssh;
    },
    async addAddress(extra) {
      await ip('-n', netns, 'addr', 'add', `${extra}/32`, 'dev', 'lo');
      await ip('route', 'add', `${extra}/32`, 'via', address, 'dev', outer);
      routes.push(`${extra}/32`);
    },
    close,
  };
}

/** sshd in the namespace on `address`:22, its host key, configuration and authorized keys in `root/ssh`. */
async function startSshInside(root: string, netns: string, address: string, name: string, started: (child: ChildProcess) => void): Promise<InternetSsh> {
  const dir = path.join(root, 'ssh');
  await mkdir(dir, { mode: 0o700 });
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  const authorized = path.join(dir, 'authorized_keys');
  const authorize = (keys: string[]) => writeFile(authorized, keys.map((key) => `restrict ${key}\n`).join(''), { mode: 0o600 });
  await authorize([]);
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const conf = path.join(dir, 'sshd_config');
  await writeFile(
    conf,
    [
      `ListenAddress ${address}`, 'Port 22', `HostKey ${dir}/host_key`, `PidFile ${dir}/sshd.pid`, `AuthorizedKeysFile ${authorized}`,
      'StrictModes no', 'UsePAM no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PermitRootLogin prohibit-password',
      'AllowUsers root', 'LogLevel VERBOSE', 'SetEnv GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=*', '',
    ].join('\n'),
  );
  const logFile = path.join(dir, 'sshd.log');
  const sshd = spawn('nsenter', [`--net=/run/netns/${netns}`, '--', '/usr/sbin/sshd', '-D', '-f', conf, '-E', logFile], { stdio: 'ignore' });
  started(sshd);
  await until(async () => {
    if (sshd.exitCode !== null) throw new Error(`sshd exited: ${await readFile(logFile, 'utf8').catch(() => '')}`);
    return new Promise<true | undefined>((resolve) => net.connect(22, address).on('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).on('error', () => resolve(undefined)));
  }, 'the internet host\'s sshd', 20_000);
  return {
    urlOf: (repositoryPath) => `ssh://root@${name}${repositoryPath}`,
    authorize,
    log: () => readFile(logFile, 'utf8').catch(() => ''),
  };
}

/** The host's own IPv4 address on the device of its default route (what a pod reaches only when the operator allows it). */
export async function hostAddress(): Promise<string> {
  const route = (await run('ip', ['-4', '-o', 'route', 'show', 'default'])).stdout;
  const device = /\bdev (\S+)/.exec(route)?.[1];
  if (!device) throw new Error('the host has no IPv4 default route');
  const found = /inet (\d+\.\d+\.\d+\.\d+)\//.exec((await run('ip', ['-4', '-o', 'addr', 'show', 'dev', device])).stdout)?.[1];
  if (!found) throw new Error(`the host has no IPv4 address on ${device}`);
  return found;
}

/** Whether the resolver at `server`:53 answers `name` (node's resolver, from the host). */
async function dnsAnswers(server: string, name: string): Promise<boolean> {
  const { Resolver } = await import('node:dns/promises');
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([server]);
  return resolver.resolve4(name).then((found) => found.length > 0, () => false);
}

// The nginx data plane (`--data-plane nginx`, the default; docs/router.md "Data plane"): Debian's nginx is the
// public listener; svc listens on loopback behind it. nginx proxies everything to svc (console, API, and every
// workspace request it cannot serve itself) and serves the workspace routes of its configuration (nginx-config.ts,
// nginx-map.ts) directly, once svc admitted the request. This file runs the process: start, reload when routes
// change, forget admissions when access changes, stop.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { access, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freeLoopbackPort, freePortOn } from '../core/loopback.ts';
import { admissionLua, directLocation, editorFilesLocation, listenOf, NGINX_MODULES, nginxConfig, nginxFiles, workspaceLocations, type EditorWebFiles, type NginxSettings } from './nginx-config.ts';
import { NginxTls } from './nginx-tls.ts';
import { accepting, answers, childrenOf, controlAnswer, endGroup, errorLogTail, exitedAlready, pause } from './nginx-process.ts';
import { workspaceConfig } from './nginx-map.ts';
import type { NamedCertificate, WildcardCertificate } from '../domains/wildcard.ts';
import type { WorkspaceRouting } from './workspace-routes.ts';

const run = promisify(execFile);

/** Debian's nginx with its Lua module, installed with apt when missing and svc runs as root; an error saying what to do otherwise. */
/**
 * What `<data dir>/nginx.pid` says while nginx runs: the master's pid, then its directory (configuration,
 * certificates, temp files), which goes with it. A pid of 0: no file.
 */
export async function readNginxPidFile(file: string): Promise<{ pid: number; dir: string }> {
  const [pid, dir] = (await readFile(file, 'utf8').catch(() => '')).split('\n');
  return { pid: Number(pid.trim()) || 0, dir: dir ?? '' };
}

export async function ensureNginx(log: (m: string) => void): Promise<string> {
  const found = async () => {
    const binary = await run('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx']).then((r) => r.stdout.trim().split('\n')[0], () => '');
    const modules = await Promise.all(NGINX_MODULES.map((file) => access(file).then(() => true, () => false)));
    return binary && modules.every(Boolean) ? binary : undefined;
  };
  const binary = await found();
  if (binary) return binary;
  const packages = ['nginx', 'libnginx-mod-http-lua'];
  if (process.getuid?.() !== 0) throw new Error(`nginx and its Lua module are needed: install them (apt-get install ${packages.join(' ')}, or scripts/setup.sh), run as root to have them installed, or start with --data-plane node`);
  log(`installing ${packages.join(' ')} (Debian)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { env });
  try {
    await install().catch(async () => {
      await run('apt-get', ['update', '-qq'], { env });
      await install();
    });
  } catch (error) {
    throw new Error(`installing nginx failed: ${(error as Error).message}`);
  }
  const installed = await found();
  if (!installed) throw new Error(`installing nginx: ${NGINX_MODULES.join(', ')} still missing`);
  return installed;
}

const RELOAD_DELAY_MS = 100;

/** nginx run by svc: started in front of svc's internal listener, reloaded with a new map, stopped with svc. */
export class NginxDataPlane {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private settings?: NginxSettings;
  private stderr = '';
  private readonly stopOnExit = () => this.child?.kill('SIGTERM');
  private readonly routings = new Map<number, WorkspaceRouting>();
  /** The generated part of the configuration last written, and the one every accepting worker runs. */
  private loaded = '';
  private running = '';
  private pending?: NodeJS.Timeout;
  /** Moves at every reload (the control port tells which one the workers run). */
  private generation = 0;
  /** Reloads and restarts one after the other. */
  private reloads: Promise<void> = Promise.resolve();
  /** Reloads done and failed since the start (metrics read them, src/metrics). */
  readonly reloadCounts = { succeeded: 0, failed: 0 };
  /** Failed reloads or restarts in a row, and the timer of the next attempt. */
  private failures = 0;
  private retry?: NodeJS.Timeout;
  private stopping = false;
  private launching = false;
  private exitedAt?: number;
  private binary?: string;
  /** With --tls-listen: the certificates served over TLS. */
  private tls?: NginxTls;

  /**
   * @param pidFile where the nginx master's pid is kept while it runs (in svc's data directory): a start after svc was
   *   killed (no chance to stop nginx) ends the one left behind first.
   */
  constructor(
    private readonly workspaceDomain: string,
    private readonly pidFile: string,
    private readonly log: (m: string) => void,
  ) {}

  /** A workspace's routing as svc loaded it: the map follows within RELOAD_DELAY_MS (one reload for a burst). */
  routingChanged(id: number, routing: WorkspaceRouting | undefined): void {
    if (routing?.row.state === 'running') this.routings.set(id, routing);
    else if (!this.routings.delete(id)) return;
    this.pending ??= setTimeout(() => {
      this.pending = undefined;
      if (!this.settings) return; // start() renders what is known by then
      const text = this.render();
      if (text === this.loaded) return;
      this.loaded = text;
      void this.reload();
    }, RELOAD_DELAY_MS);
  }

  /** The port where custom domains are served over TLS (--tls-listen); undefined without it. */
  get tlsPort(): number | undefined {
    return this.tls?.port;
  }

  /**
   * The custom domains' certificates to serve: written and loaded by a reload when they changed; resolves once
   * nginx's workers run them (connections of the old workers finish on the old certificates).
   */
  certificatesChanged(certificates: NamedCertificate[]): Promise<void> {
    if (!this.tls?.setCertificates(certificates) || !this.settings) return Promise.resolve();
    this.loaded = this.render();
    return this.reload();
  }

  /** A renewed wildcard certificate: written and loaded by a reload; resolves once nginx's workers serve it. */
  wildcardChanged(wildcard: WildcardCertificate): Promise<void> {
    if (!this.tls) return Promise.resolve();
    this.tls.setWildcard(wildcard);
    if (!this.settings) return Promise.resolve();
    this.loaded = this.render();
    return this.reload();
  }

  private render(): string {
    const files = nginxFiles(this.settings!.dir);
    const tls = this.tls?.config(this.settings!);
    return (tls?.servers ?? '') + workspaceConfig(this.routings.values(), {
      domain: this.workspaceDomain,
      listen: listenOf(this.settings!),
      workspaceInclude: files.workspaceInclude,
      directInclude: files.directInclude,
      // Workspace hosts nginx serves itself take TLS too when the wildcard certificate covers them.
      tls: tls?.workspaces,
      editorFiles: this.settings!.editorFiles && { urlPrefix: this.settings!.editorFiles.urlPrefix, include: files.editorInclude },
    });
  }

  /**
   * A key was deleted, a user disabled, membership or a workspace's restriction changed: nginx forgets every
   * admission it keeps (shared by all workers). Resolves when it has, so a deleted key fails at once.
   */
  async accessChanged(): Promise<void> {
    if (!this.settings || !this.child || exitedAlready(this.child)) return;
    if ((await controlAnswer(this.settings.controlPort, '/forget')) === undefined) this.log('data plane: nginx did not forget its admissions');
  }

  /**
   * Resolves once the reloads asked for so far are done, the old workers no longer accepting: until then a new
   * connection may still reach a worker of the configuration before (a certificate it did not have yet).
   */
  settled(): Promise<void> {
    return this.reloads;
  }

  /** Whether the configuration nginx's workers run serves some route of this workspace itself (tests wait for it). */
  servesDirectly(workspaceId: number): boolean {
    return this.running.includes(`upstream svc_w${workspaceId}_`);
  }

  /**
   * Starts nginx; the port it listens on (a free one when `listenPort` is 0). Ports svc picked itself are picked
   * again for a second attempt when the first did not come up (another process may have taken one meanwhile).
   */
  async start(options: { listenHost: string; listenPort: number; internalPort: number; eventsSocket?: string; upstreamTimeoutSeconds: number; admitSecret: string; bodyLimitBytes: number; accessLog?: string; tlsListen?: { host: string; port: number }; wildcard?: WildcardCertificate; editorFiles?: EditorWebFiles }): Promise<number> {
    this.binary = await ensureNginx(this.log);
    await this.endLeftBehind();
    const picked = !options.listenPort && !(options.tlsListen && options.tlsListen.port);
    for (let attempt = 1; ; attempt++) {
      const port = await this.prepare(options);
      process.once('exit', this.stopOnExit);
      try {
        await this.launch();
        return port;
      } catch (error) {
        await this.stop();
        const problem = `--data-plane nginx: nginx did not start on ${options.listenHost}:${port}: ${(error as Error).message}`;
        if (!picked || attempt === 2) throw new Error(problem);
        this.log(`${problem}; trying again on other ports`);
        this.stopping = false;
      }
    }
  }

  /** A fresh directory with the configuration, ports and settings of one start; the port nginx is to listen on. */
  private async prepare(options: Parameters<NginxDataPlane['start']>[0]): Promise<number> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-nginx-'));
    const root = process.getuid?.() === 0;
    await mkdir(path.join(dir, 'temp'), { recursive: true, mode: 0o755 });
    const port = options.listenPort || (await freePortOn(options.listenHost));
    if (options.tlsListen) {
      const tlsPort = options.tlsListen.port || (await freePortOn(options.tlsListen.host));
      this.tls = new NginxTls(listenOf({ listenHost: options.tlsListen.host, listenPort: tlsPort }), tlsPort, options.wildcard, this.workspaceDomain);
    }
    this.settings = { ...options, listenPort: port, dir, workerUser: root ? 'nobody nogroup' : undefined, controlPort: await freeLoopbackPort() };
    // Workers (not root when svc is root) write request bodies they buffer there; only their user may read them.
    const owned = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => path.join(dir, 'temp', name));
    for (const folder of owned) await mkdir(folder, { recursive: true, mode: 0o700 });
    if (root) {
      const { stdout } = await run('id', ['-u', 'nobody']);
      const nobody = Number(stdout.trim());
      for (const folder of owned) await chown(folder, nobody, nobody);
      await run('chmod', ['755', dir]);
    }
    this.loaded = this.render();
    return port;
  }

  /**
   * Writes the whole configuration (what svc wants, `loaded`) and starts nginx on it; resolves once its workers
   * answer with this generation. nginx is the leader of its own process group, so workers it leaves behind when it
   * is killed can be found and ended (they keep the listening sockets).
   */
  private async launch(): Promise<void> {
    this.launching = true;
    try {
      await this.spawnAndWait();
    } finally {
      this.launching = false;
    }
  }

  private async spawnAndWait(): Promise<void> {
    const settings = this.settings!;
    await this.writeFiles();
    const workspaces = this.loaded;
    const child = spawn(this.binary!, ['-p', settings.dir, '-c', nginxFiles(settings.dir).config], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    this.child = child;
    this.stderr = '';
    child.stderr!.on('data', (chunk) => (this.stderr = (this.stderr + chunk).slice(-4000)));
    this.exited = new Promise<void>((resolve) => child.on('exit', (code, signal) => {
      resolve();
      this.childExited(child, code, signal);
    }));
    if (child.pid) await writeFile(this.pidFile, `${child.pid}\n${settings.dir}\n`, { mode: 0o600 });
    const host = settings.listenHost === '0.0.0.0' ? '127.0.0.1' : settings.listenHost;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const listening = await answers(host, settings.listenPort);
      const generation = await controlAnswer(settings.controlPort, '/generation');
      if (listening && generation === String(this.generation)) break;
      if (exitedAlready(child) || Date.now() > deadline) {
        if (child.pid) await endGroup(child.pid);
        const seen = `port ${settings.listenPort} ${listening ? 'answered' : 'did not answer'}, control port ${settings.controlPort} answered ${generation === undefined ? 'nothing' : `generation ${JSON.stringify(generation.slice(0, 40))}`} (wanted ${this.generation})`;
        const said = this.stderr.trim() || (await errorLogTail(path.join(settings.dir, 'error.log')));
        throw new Error(`${exitedAlready(child) ? 'nginx exited' : 'nginx did not answer within 10 s'}: ${seen}${said ? `; nginx said: ${said}` : ''}`);
      }
      await pause(20);
    }
    this.running = workspaces;
  }

  /** nginx exited while svc runs (killed, crashed): noticed at once, and started again with what svc wants. */
  private childExited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || child !== this.child || this.launching) return;
    this.log(`data plane: nginx ${child.pid} exited (${signal ?? `code ${code}`}); starting it again`);
    this.exitedAt = Date.now();
    void this.reload();
  }

  /** Ends what is left of the nginx that exited (workers keep the listening sockets) and starts a new one. */
  private async restart(pid: number | undefined): Promise<void> {
    if (pid) await endGroup(pid);
    this.generation++;
    await this.launch();
    this.log(`data plane: nginx started again (pid ${this.child?.pid}) ${Date.now() - (this.exitedAt ?? Date.now())} ms after it exited`);
  }

  /** The nginx of an earlier start of svc that was killed: told to stop, then killed after 5 s, its workers too. */
  private async endLeftBehind(): Promise<void> {
    const { pid, dir } = await readNginxPidFile(this.pidFile);
    if (!pid) return;
    const isNginx = async () => (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).startsWith('nginx: master');
    if (await isNginx()) {
      this.log(`data plane: ending nginx ${pid} left behind by an earlier start`);
      process.kill(pid, 'SIGTERM');
      const deadline = Date.now() + 5000;
      while ((await isNginx()) && Date.now() < deadline) await pause(20);
    }
    await endGroup(pid);
    if (dir && path.basename(dir).startsWith('svc-nginx-') && path.dirname(dir) === os.tmpdir()) await rm(dir, { recursive: true, force: true });
    await rm(this.pidFile, { force: true });
  }

  /** Every file of the configuration, so that an attempt after a failed one re-applies all of it. */
  private async writeFiles(): Promise<void> {
    const settings = this.settings!;
    const files = nginxFiles(settings.dir);
    await writeFile(files.admission, admissionLua(settings));
    await writeFile(files.workspaceInclude, workspaceLocations(settings));
    await writeFile(files.directInclude, directLocation(settings));
    if (settings.editorFiles) await writeFile(files.editorInclude, editorFilesLocation(settings));
    await this.tls?.writeFiles(settings.dir);
    await writeFile(files.config, nginxConfig(settings, this.loaded, this.generation));
  }

  /**
   * Runs `step` after the steps before it (reloads and restarts never interleave). A step that fails is tried again
   * after a pause that grows to 5 s, until one succeeds: what nginx runs catches up with what svc wants.
   */
  private enqueue(step: () => Promise<void>, what: string): Promise<void> {
    this.reloads = this.reloads.then(step).then(
      () => void (this.failures = 0),
      (error: Error) => {
        this.failures++;
        this.reloadCounts.failed++;
        this.log(`data plane: ${what} failed (attempt ${this.failures}), trying again: ${error.message}`);
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.reload(), Math.min(5000, 100 * 2 ** this.failures));
      },
    );
    return this.reloads;
  }

  /**
   * Brings nginx to what svc wants: the current workspaces with a new generation, written, then loaded (SIGHUP, as
   * `nginx -s reload` sends), or nginx started again when it is not running. Resolves when only workers of the new
   * generation take requests (the master lets old ones go on for 100 ms) and the admissions given under the old
   * configuration are forgotten.
   */
  private reload(): Promise<void> {
    return this.enqueue(async () => {
      const child = this.child;
      if (this.stopping || !child?.pid || !this.settings) return;
      if (exitedAlready(child)) return this.restart(child.pid);
      this.generation++;
      const workspaces = this.loaded;
      await this.writeFiles();
      const before = await childrenOf(child.pid);
      child.kill('SIGHUP');
      await this.loadedGeneration(child, String(this.generation));
      const deadline = Date.now() + 5000;
      for (const pid of before) while ((await accepting(pid)) && Date.now() < deadline) await pause(5);
      this.running = workspaces;
      await this.accessChanged();
      this.reloadCounts.succeeded++;
    }, 'bringing nginx up to date');
  }

  /** Waits until nginx's workers run `generation` (the control port answers it), up to 5 s or until nginx exits. */
  private async loadedGeneration(child: ChildProcess, generation: string): Promise<void> {
    const deadline = Date.now() + 5000;
    while ((await controlAnswer(this.settings!.controlPort, '/generation')) !== generation) {
      if (exitedAlready(child)) throw new Error('nginx exited during the reload');
      if (Date.now() > deadline) throw new Error(`nginx did not load generation ${generation}: ${this.stderr.trim().slice(-500)}`);
      await pause(5);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.pending);
    clearTimeout(this.retry);
    process.off('exit', this.stopOnExit);
    await this.reloads;
    const child = this.child;
    if (child && !exitedAlready(child)) {
      child.kill('SIGTERM');
      await this.exited;
    }
    if (child?.pid) await endGroup(child.pid);
    this.child = undefined;
    await rm(this.pidFile, { force: true });
    if (this.settings) await rm(this.settings.dir, { recursive: true, force: true });
  }
}

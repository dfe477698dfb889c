// A shell in a workspace and its ports on this machine, through the real server, real pods and the real CLI:
// `svc exec` (exit codes, separate streams, stdin, a replica), `svc ssh` driven through a pseudo-terminal (keys in,
// screen out, resize, Ctrl-C, exit status), `svc port-forward` carrying HTTP to the editor pod and a replica and a
// psql session to the landscape's managed PostgreSQL, several connections at once; a viewer refused with 403, an
// upgrade without credentials with 401, both audited; a sleeping workspace woken by `svc exec`.
// Needs root (pods with their own network) and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import pg from 'pg';
import pty from 'node-pty';
import WebSocket from 'ws';
import { EXEC_PROTOCOL } from '../src/core/channel-protocol.ts';
import { installedPostgresMajors } from '../src/managed/postgres-instance.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc, startSvc, stopSvc, svcBin, type SvcProcess } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const skip =
  process.getuid?.() !== 0
    ? 'needs root: pods with their own network'
    : (await installedPostgresMajors(toolsDir)).includes(16)
      ? false
      : `PostgreSQL 16 is not installed in ${toolsDir}; run scripts/setup-postgres.sh`;

const files = {
  'svc.yml': `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    providerVersion: "16"
    secrets:
      password: \${{ secrets.DB_PASSWORD }}
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
    env:
      ROLE: web-replica
`,
  'web.js': `require('node:http').createServer((req, res) => res.end('web saw ' + req.url)).listen(8080, '0.0.0.0');\n`,
};

let server: TestServer;
let dev: ApiClient;
let viewer: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let tools: string;
let ws: number;
let svcEnv: Record<string, string>;
const forwards: SvcProcess[] = [];

before(async () => {
  if (skip) return;
  tools = await mkdtemp(path.join(os.tmpdir(), 'svc-shell-tools-'));
  await chmod(tools, 0o755);
  await symlink(path.join(toolsDir, 'postgres'), path.join(tools, 'postgres'));
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_TOOLS_DIR: tools },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'shell-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Shell' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Shell' })).body.id;
  const developer = await createPerson(server.admin, 'shell-dev@example.com');
  const watcher = await createPerson(server.admin, 'shell-viewer@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  await owner.key.put(`/teams/${team}/members/${watcher.id}`, { role: 'viewer' });
  dev = developer.key;
  viewer = watcher.key;
  repository = await createBareRepository(files);
  const created = await dev.post('/workspaces', { team_id: team, name: 'shell', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  const createdOp = await operationFinished(dev, created.body.id);
  assert.equal(createdOp.state, 'succeeded', JSON.stringify(createdOp));
  await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'p@ss word' });
  await dev.put(`/workspaces/${ws}/variables/GREETING`, { value: 'hello from svc' });
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal((await operationFinished(dev, sync.body.id)).state, 'succeeded');
  await until(async () => {
    const services = (await dev.get(`/workspaces/${ws}/landscape`)).body.services as Array<{ name: string; status: string }>;
    return ['running', 'internal'].includes(services.find((s) => s.name === 'web')?.status ?? '') ? true : undefined;
  }, 'web to run');
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, XDG_CONFIG_HOME: tools };
});

after(async () => {
  if (skip) return;
  for (const forward of forwards) await stopSvc(forward);
  await removeWorkspaces(driver, [ws]);
  await server?.close();
  await repository?.remove();
  await rm(tools, { recursive: true, force: true });
});

test('svc exec: stdout and stderr apart, the workspace variables, /data/app, and the exit code passed through', { skip }, async () => {
  const run = await runSvc(['exec', String(ws), '--', 'sh', '-c', 'echo out; echo err >&2; echo "$GREETING"; pwd; id -u; exit 3'], svcEnv);
  assert.equal(run.code, 3, run.stderr);
  const { uid } = (await server.server.database.pool.query<{ uid: number }>('SELECT uid FROM workspaces WHERE id = $1', [ws])).rows[0];
  assert.equal(run.stdout, `out\nhello from svc\n/data/app\n${uid}\n`);
  assert.equal(run.stderr, 'err\n');
  const ok = await runSvc(['exec', String(ws), '--', 'true'], svcEnv);
  assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, '', '']);
  const missing = await runSvc(['exec', String(ws), '--', 'no-such-command-here'], svcEnv);
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /no-such-command-here/);
});

test('svc exec -i sends standard input and its end; without -i the command reads an empty one', { skip }, async () => {
  const run = startSvc(['exec', '-i', String(ws), '--', 'wc', '-l'], svcEnv);
  run.child.stdin.end('one\ntwo\nthree\n');
  assert.equal(await run.exited, 0, run.stderr());
  assert.equal(run.stdout().trim(), '3');
  const empty = await runSvc(['exec', String(ws), '--', 'cat'], svcEnv);
  assert.deepEqual([empty.code, empty.stdout], [0, '']);
});

test('svc exec --service runs in a replica of the service, with its env', { skip }, async () => {
  const run = await runSvc(['exec', String(ws), '--service', 'web', '--', 'sh', '-c', 'echo "$ROLE $PORT"; hostname; pwd'], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'web-replica 8080\nweb-0\n/data/app\n');
  const managed = await runSvc(['exec', String(ws), '--service', 'db', '--', 'true'], svcEnv);
  assert.equal(managed.code, 1);
  assert.match(managed.stderr, /managed service/);
  const unknown = await runSvc(['exec', String(ws), '--service', 'nope', '--', 'true'], svcEnv);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Not found/);
});

test('svc ssh through a pseudo-terminal: keys in, the screen out, resize, Ctrl-C, and the shell\'s exit status', { skip }, async () => {
  const terminal = pty.spawn(process.execPath, [svcBin, 'ssh', String(ws)], { name: 'xterm-256color', cols: 80, rows: 24, env: { ...process.env, ...svcEnv } as Record<string, string> });
  let screen = '';
  terminal.onData((data) => (screen += data));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  const seen = (pattern: RegExp, what: string) =>
    until(async () => (pattern.test(screen) ? true : undefined), what, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}; the screen:\n${JSON.stringify(screen)}`);
    });
  try {
    terminal.write('echo "home=$HOME"; pwd; tty\r');
    await seen(/home=\/data\/home\r+\n\/data\/app\r+\n\/dev\/pts\/\d+\r+\n/, 'HOME, the directory and the terminal');
    terminal.write('stty size\r');
    await seen(/[\r\n]24 80\r+\n/, 'the first size');
    terminal.resize(120, 40);
    terminal.write('stty size\r');
    await seen(/[\r\n]40 120\r+\n/, 'the new size');
    terminal.write('sleep 60\r');
    await seen(/sleep 60\r+\n/, 'the sleep started');
    terminal.write('\x03');
    terminal.write('echo "after=$?"\r');
    await seen(/[\r\n]after=130\r+\n/, 'the interrupted sleep');
    terminal.write('exit 3\r');
    assert.equal(await exited, 3, screen);
  } finally {
    terminal.kill();
  }
});

/** Starts `svc port-forward` and answers the local port of each forward, in order. */
async function forward(...specs: string[]): Promise<number[]> {
  const run = startSvc(['port-forward', String(ws), ...specs], svcEnv);
  forwards.push(run);
  await run.waitFor(/Press Ctrl-C to stop/);
  return [...run.stdout().matchAll(/Forwarding 127\.0\.0\.1:(\d+) ->/g)].map((match) => Number(match[1]));
}

test('svc port-forward carries HTTP to the editor pod and to a replica, several connections at once', { skip }, async () => {
  const [editorPort, webPort] = await forward('8443:0', 'web:8080:0');
  const editor = await fetch(`http://127.0.0.1:${editorPort}/`);
  assert.equal(editor.status < 500, true);
  await editor.text();
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => fetch(`http://127.0.0.1:${webPort}/hello/${i}`, { headers: { connection: 'close' } }).then((r) => r.text())));
  assert.deepEqual(answers, Array.from({ length: 8 }, (_, i) => `web saw /hello/${i}`));
  // a port nothing listens on: the connection closes and the forward goes on
  const [nothing] = await forward('9:0');
  await assert.rejects(fetch(`http://127.0.0.1:${nothing}/`));
  assert.equal(await (await fetch(`http://127.0.0.1:${webPort}/again`)).text(), 'web saw /again');
});

test('svc port-forward carries a psql session to the managed PostgreSQL of the landscape', { skip }, async () => {
  const [port] = await forward('db:5432:0');
  const tunnel = forwards.at(-1)!;
  const env = { ...process.env, PGPASSWORD: 'p@ss word', PGCONNECT_TIMEOUT: '20' };
  const args = ['-h', '127.0.0.1', '-p', String(port), '-U', 'app', '-d', 'app', '-tAc'];
  // A failure shows what the forward said (the agent's dial error, a refused upgrade) beside psql's own message.
  const psql = (sql: string) =>
    promisify(execFile)('psql', [...args, sql], { env }).catch((error: Error) => {
      throw new Error(`${error.message}\nsvc port-forward said: ${tunnel.stderr()}`);
    });
  await psql("CREATE TABLE IF NOT EXISTS notes (body text); INSERT INTO notes VALUES ('through the tunnel')");
  const { stdout } = await psql('SELECT body FROM notes');
  assert.equal(stdout.trim(), 'through the tunnel');
});

test('a viewer is refused a shell with 403, an upgrade without credentials with 401; both kinds are audited', { skip }, async () => {
  const refused = await runSvc(['exec', String(ws), '--', 'true'], { ...svcEnv, SVC_TOKEN: viewer.auth.token! });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /workspace\.exec/);
  const upgrade = (headers: Record<string, string>) =>
    new Promise<{ status: number; type: string }>((resolve, reject) => {
      const socket = new WebSocket(`${server.url.replace('http', 'ws')}/api/v1/workspaces/${ws}/exec?command=true`, EXEC_PROTOCOL, { headers });
      socket.on('open', () => reject(new Error('the upgrade was accepted')));
      socket.on('error', () => undefined);
      socket.on('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, type: JSON.parse(body).type }));
      });
    });
  assert.deepEqual(await upgrade({ authorization: `Bearer ${viewer.auth.token}` }), { status: 403, type: 'urn:svc:problem:forbidden' });
  assert.deepEqual(await upgrade({}), { status: 401, type: 'urn:svc:problem:unauthenticated' });
  const entries = (await server.admin.get('/audit-log?action=workspace.exec&limit=200')).body.items as Array<{ outcome: number; actor_id: number; target: string }>;
  assert.ok(entries.some((e) => e.outcome === 403 && e.actor_id === viewer.auth.userId), JSON.stringify(entries));
  assert.ok(entries.some((e) => e.outcome === 101 && e.actor_id === dev.auth.userId && e.target === `/workspaces/${ws}/exec`), JSON.stringify(entries));
  const forwarded = (await server.admin.get('/audit-log?action=workspace.port_forward&limit=200')).body.items as Array<{ target: string }>;
  assert.ok(forwarded.some((e) => e.target === `/workspaces/${ws}/port-forward?service=db&port=5432`), JSON.stringify(forwarded));
});

test('svc port-forward stops on Ctrl-C with a PostgreSQL session still open: the session is closed and it exits 0', { skip }, async () => {
  const [port] = await forward('db:5432:0');
  const tunnel = forwards.pop()!;
  const session = new pg.Client({ host: '127.0.0.1', port, user: 'app', password: 'p@ss word', database: 'app' });
  const ended = new Promise<void>((resolve) => session.on('end', resolve));
  session.on('error', () => undefined);
  await session.connect();
  assert.equal((await session.query('SELECT 1 AS one')).rows[0].one, 1);
  tunnel.child.kill('SIGINT');
  const code = await until(async () => tunnel.child.exitCode ?? undefined, 'svc port-forward to exit with the session open', 30_000).catch(async (error: Error) => {
    tunnel.child.kill('SIGKILL');
    throw error;
  });
  assert.equal(code, 0, tunnel.stderr());
  await ended;
  await session.end().catch(() => undefined);
});

test('svc exec wakes a sleeping workspace first', { skip }, async () => {
  for (const run of forwards.splice(0)) await stopSvc(run);
  const slept = await dev.post(`/workspaces/${ws}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  assert.equal(slept.body.state, 'sleeping');
  const run = await runSvc(['exec', String(ws), '--', 'sh', '-c', 'echo awake in $PWD'], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, 'awake in /data/app\n');
  assert.equal((await dev.get(`/workspaces/${ws}`)).body.state, 'running');
});

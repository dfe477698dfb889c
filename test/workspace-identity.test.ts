// A shell that knows who it is (issue 34 item 3, issue 35 item 7), through the real server, real pods and the real
// CLI: the workspace UID is named after its owner in the editor pod, a replica and `svc ssh` (`whoami`, `id`,
// HOME on the volume outside the code, bash as a login shell with a prompt naming the workspace); `git status` stays
// clean after files in HOME, shell history and an `npm install`; /data/app holds nothing of svc; a volume of the old
// layout (the code at its root) still starts, its code moved once. Needs root (pods with their own network).
import assert from 'node:assert/strict';
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pty from 'node-pty';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc, svcBin } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const skip = process.getuid?.() !== 0 ? 'needs root: pods with their own network' : false;

const files = {
  'svc.yml': `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
`,
  'web.js': `require('node:http').createServer((req, res) => res.end('ok')).listen(8080, '0.0.0.0');\n`,
  'package.json': JSON.stringify({ name: 'first-day', version: '1.0.0', private: true, dependencies: { greet: 'file:vendor/greet' } }, null, 2),
  '.npmrc': 'package-lock=false\n',
  '.gitignore': 'node_modules/\n',
  'vendor/greet/package.json': JSON.stringify({ name: 'greet', version: '1.0.0', main: 'index.js' }),
  'vendor/greet/index.js': `module.exports = () => 'hello';\n`,
};
/** `ls -A /data/app` after the npm install: the repository and node_modules, nothing of svc. */
const CODE = ['.git', '.gitignore', '.npmrc', 'node_modules', 'package.json', 'svc.yml', 'vendor', 'web.js'];

let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let driver: RuntimeDriver;
let ws: number;
let uid: number;
let svcEnv: Record<string, string>;
let team: number;
let dotfiles: BareRepository;
let second: number | undefined;

before(async () => {
  if (skip) return;
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  const owner = await createPerson(server.admin, 'Ada.Lovelace@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Identity' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Identity' })).body.id;
  dev = owner.key;
  repository = await createBareRepository(files);
  const created = await dev.post('/workspaces', { team_id: team, name: 'first-day', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  const createdOp = await operationFinished(dev, created.body.id);
  assert.equal(createdOp.state, 'succeeded', JSON.stringify(createdOp));
  uid = (await server.server.database.pool.query<{ uid: number }>('SELECT uid FROM workspaces WHERE id = $1', [ws])).rows[0].uid;
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal((await operationFinished(dev, sync.body.id)).state, 'succeeded');
  await until(async () => {
    const services = (await dev.get(`/workspaces/${ws}/landscape`)).body.services as Array<{ name: string; status: string }>;
    return ['running', 'internal'].includes(services.find((s) => s.name === 'web')?.status ?? '') ? true : undefined;
  }, 'web to run');
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, XDG_CONFIG_HOME: path.join(server.server.config.dataDir, 'cli') };
});

after(async () => {
  if (skip) return;
  await removeWorkspaces(driver, [ws, second]);
  await server?.close();
  await repository?.remove();
  await dotfiles?.remove();
});

const exec = async (script: string, ...more: string[]) => {
  const run = await runSvc(['exec', String(ws), ...more, '--', 'bash', '-c', script], svcEnv);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  return run.stdout;
};

test('svc exec in the editor pod: whoami, id, HOME outside the code, the workspace\'s host name, bash', { skip }, async () => {
  const said = await exec('whoami; id; echo "$HOME"; hostname; echo "$SHELL"; getent passwd "$(id -u)"; pwd');
  assert.equal(
    said,
    [
      'ada-lovelace',
      `uid=${uid}(ada-lovelace) gid=0(root) groups=0(root)`,
      '/data/home',
      'first-day',
      '/bin/bash',
      `ada-lovelace:x:${uid}:0:Ada.Lovelace:/data/home:/bin/bash`,
      '/data/app',
      '',
    ].join('\n'),
  );
});

test('svc exec in a replica: the same user, the same HOME', { skip }, async () => {
  assert.equal(await exec('whoami; echo "$HOME"; id -un; test -w "$HOME" && echo writable', '--service', 'web'), 'ada-lovelace\n/data/home\nada-lovelace\nwritable\n');
});

test('svc ssh: bash as a login shell, its prompt naming the user and the workspace, its history kept in HOME', { skip }, async () => {
  const terminal = pty.spawn(process.execPath, [svcBin, 'ssh', String(ws)], { name: 'xterm-256color', cols: 120, rows: 24, env: { ...process.env, ...svcEnv } as Record<string, string> });
  let screen = '';
  terminal.onData((data) => (screen += data));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  const seen = (pattern: RegExp, what: string) =>
    until(async () => (pattern.test(screen) ? true : undefined), what, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}; the screen:\n${JSON.stringify(screen)}`);
    });
  try {
    await seen(/ada-lovelace@first-day:\/data\/app\$ $/, 'the prompt');
    terminal.write('echo "shell=$0 $(shopt login_shell) user=$(whoami) home=$HOME"\r');
    await seen(/shell=bash login_shell\s+on user=ada-lovelace home=\/data\/home\r+\n/, 'a login bash, its user and HOME');
    terminal.write('exit\r');
    assert.equal(await exited, 0, screen);
  } finally {
    terminal.kill();
  }
  assert.match(await exec('cat ~/.bash_history'), /echo "shell=\$0/);
});

test('git status stays clean after files in HOME, shell history and an npm install; /data/app holds nothing of svc', { skip }, async () => {
  const said = await exec('mkdir -p ~/.cache/tool && echo x > ~/.cache/tool/file && npm install --offline --no-audit --no-fund >/dev/null 2>&1 && node -e "console.log(require(\'greet\')())" && test -d ~/.npm && git status --porcelain && echo clean && ls -A /data/app');
  assert.equal(said, `hello\nclean\n${CODE.join('\n')}\n`);
  const volume = path.join(server.server.config.dataDir, 'volumes', String(ws));
  assert.deepEqual((await readdir(volume)).sort(), ['.svc', 'app', 'home'], 'the volume: the code, HOME and svc\'s own files');
});

test('a volume of the old layout (the code at its root) starts: its code moved into /data/app once, git status clean', { skip }, async () => {
  const slept = await dev.post(`/workspaces/${ws}/sleep`);
  assert.equal(slept.status, 200, slept.text);
  // the layout before HOME had a place: the code at the volume's root, svc's files in its .svc, no home
  const volume = path.join(server.server.config.dataDir, 'volumes', String(ws));
  for (const name of await readdir(path.join(volume, 'app'))) await rename(path.join(volume, 'app', name), path.join(volume, name));
  await rmdir(path.join(volume, 'app'));
  await rm(path.join(volume, 'home'), { recursive: true });
  await rm(path.join(volume, '.svc', 'layout'));
  await mkdir(path.join(volume, '.svc', 'code-server'), { recursive: true });
  const said = await exec('git status --porcelain && echo clean && ls -A /data/app && echo "$HOME" && ls -A /data');
  assert.equal(said, `clean\n${CODE.join('\n')}\n/data/home\n.svc\napp\nhome\n`);
  assert.equal((await dev.get(`/workspaces/${ws}`)).body.state, 'running');
  assert.deepEqual((await readdir(path.join(volume, '.svc'))).sort(), ['code-server', 'layout']);
});

test('dotfiles: set with svc dotfiles, a password refused, applied in HOME at a workspace\'s first start with its install script\'s output in the log', { skip }, async () => {
  dotfiles = await createBareRepository({
    'install.sh': '#!/bin/sh\necho "installing for $(whoami) in $HOME"\necho "alias ll=\'ls -l\'" > "$HOME/.bash_aliases"\n',
    '.vimrc': 'set number\n',
  });
  assertProblem(await dev.put('/me/dotfiles', { url: 'https://ada:s3cret@git.example.com/ada/dotfiles.git' }), 422, 'repository-not-allowed');
  assert.deepEqual((await dev.get('/me/dotfiles')).body, { url: null });
  const set = await runSvc(['dotfiles', 'set', dotfiles.url], svcEnv);
  assert.equal(set.code, 0, set.stderr);
  assert.equal((await runSvc(['dotfiles', 'show'], svcEnv)).stdout, `${dotfiles.url}\n`);
  const created = await dev.post('/workspaces', { team_id: team, name: 'with-dotfiles', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  second = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
  const run = await runSvc(['exec', String(second), '--', 'bash', '-c', 'cat ~/.bash_aliases; cat /data/.svc/dotfiles.log; ls -A ~/.dotfiles; git status --porcelain; echo clean'], svcEnv);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    run.stdout,
    [
      "alias ll='ls -l'",
      `Cloning your dotfiles from ${dotfiles.url}`,
      'Running install.sh',
      'installing for ada-lovelace in /data/home',
      'install.sh exited with code 0',
      'Dotfiles applied.',
      '.git', '.vimrc', 'install.sh',
      'clean',
      '',
    ].join('\n'),
  );
  const unset = await runSvc(['dotfiles', 'unset'], svcEnv);
  assert.equal(unset.code, 0, unset.stderr);
  assert.deepEqual((await dev.get('/me/dotfiles')).body, { url: null });
});

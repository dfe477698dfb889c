// `svc init` on five fixture repositories (test/fixtures/init): each writes a svc.yml that `svc lint` accepts, with
// what it mapped and what it could not; the compose one's landscape (managed postgres and redis, a web app that
// needs them) then Syncs and answers on a real server.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { initCommand } from '../src/cli/init.ts';
import { lintCommand } from '../src/cli/lint.ts';
import { installedRedisMajor } from '../src/managed/redis-instance.ts';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { managedSkip, removeManagedInstances, startManagedServer } from './helpers/managed-landscape.ts';
import type { TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'init');
let scratch: string;

async function run(command: typeof initCommand | typeof lintCommand, argv: string[], _env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (s: string) => void (stdout += s), stderr: (s: string) => void (stderr += s), cwd: scratch };
  const code = await (command === initCommand ? initCommand(argv, io) : lintCommand(argv, io));
  return { code, stdout, stderr };
}

/** Copies fixture `name`, runs svc init in it, checks the file lints; the file's text and parsed content. */
async function initialized(name: string, copy = name): Promise<{ dir: string; text: string; file: any; stdout: string }> {
  const dir = path.join(scratch, copy);
  await cp(path.join(fixtures, name), dir, { recursive: true });
  const init = await run(initCommand, [copy]);
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /^Wrote .*svc\.yml from /);
  const lint = await run(lintCommand, [copy]);
  assert.equal(lint.code, 0, `${lint.stdout}${lint.stderr}`);
  const text = await readFile(path.join(dir, 'svc.yml'), 'utf8');
  return { dir, text, file: parseYaml(text), stdout: init.stdout };
}

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-init-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('svc init maps each kind of repository to a svc.yml that lints', () => {
  test('a devcontainer (JSONC): create commands -> prepare, a database feature -> managed, ports and env -> the app', async () => {
    const { file, text } = await initialized('devcontainer');
    assert.deepEqual(file.prepare, [{ name: 'install', run: 'npm ci' }, { name: 'migrate', run: 'npm run migrate' }]);
    assert.deepEqual(file.test, [{ name: 'test', run: 'npm test' }]);
    assert.deepEqual(file.services.postgres, { type: 'managed', provider: 'postgres' });
    assert.deepEqual(file.services.web.steps, [{ run: 'npm run dev' }]);
    assert.deepEqual(file.services.web.ports, [{ port: 3000, routes: [{ path: '/' }] }]);
    assert.deepEqual(file.services.web.env, { NODE_ENV: 'development', API_TOKEN: '${{ env.API_TOKEN }}' });
    assert.match(text, /# - \.devcontainer\/devcontainer\.json: feature ghcr\.io\/devcontainers\/features\/node:1 \{"version":"20"\}/);
    assert.match(text, /# - \.devcontainer\/devcontainer\.json: image mcr\.microsoft\.com\/devcontainers\/typescript-node:1-20-bookworm is the\n#   editor's environment/);
    assert.match(text, /forwarded port 5432 is "postgres"/);
    assert.match(text, /# - \.devcontainer\/devcontainer\.json: customizations\n/);
  });

  test('a compose file: postgres and redis -> managed, the app built here -> steps with needs and the DSNs', async () => {
    const { file, text } = await initialized('compose');
    assert.deepEqual(file.services.db, { type: 'managed', provider: 'postgres', providerVersion: '16', config: { database: 'shop', user: 'shop' } });
    assert.deepEqual(file.services.cache, { type: 'managed', provider: 'redis', providerVersion: '7' });
    assert.deepEqual(file.services.web, {
      type: 'steps',
      env: { DATABASE_URL: '${{ services.db.dsn }}', REDIS_URL: '${{ services.cache.dsn }}', GREETING: 'hello' },
      ports: [{ port: 8080, routes: [{ path: '/' }] }],
      needs: ['db', 'cache'],
      steps: [{ run: 'node web.js' }],
    });
    assert.match(text, /# from docker-compose\.yml service "db" \(image postgres:16-alpine\)\n  db:/);
    assert.match(text, /# - docker-compose\.yml service "web": healthcheck\n/);
    assert.match(text, /"db" gets a generated password instead of POSTGRES_PASSWORD/);
  });

  test('a Procfile: processes -> steps services, web on its $PORT with the dev URL, release -> prepare', async () => {
    const { file } = await initialized('procfile');
    assert.deepEqual(file.prepare, [{ name: 'release', run: 'bundle exec rails db:migrate' }]);
    assert.deepEqual(file.services.web, { type: 'steps', ports: [{ port: 5000, routes: [{ path: '/' }] }], steps: [{ run: 'bundle exec puma -C config/puma.rb' }] });
    assert.deepEqual(file.services.worker, { type: 'steps', steps: [{ run: 'bundle exec sidekiq' }] });
  });

  test('a .gitpod.yml: init -> prepare, commands -> services, each port on the task that names it', async () => {
    const { file, text } = await initialized('gitpod');
    assert.deepEqual(file.prepare, [{ name: 'backend: init', run: 'export GOFLAGS=-mod=mod\ngo build ./...' }]);
    assert.deepEqual(file.services.backend.ports, [{ port: 8080, public: true, routes: [{ path: '/' }] }]);
    assert.deepEqual(file.services.backend.steps, [{ run: 'export GOFLAGS=-mod=mod\ngo run ./cmd/server' }]);
    assert.deepEqual(file.services.docs.ports, [{ port: 8000 }]);
    assert.match(text, /# - \.gitpod\.yml: port 9000-9010 \(ranges are not mapped\)/);
    assert.match(text, /# - \.gitpod\.yml: vscode\n/);
  });

  test('a bare Node app: install by its lock file and build -> prepare, start -> web; npm\'s placeholder test is left out', async () => {
    const { file } = await initialized('node');
    assert.deepEqual(file.prepare, [{ name: 'install dependencies', run: 'yarn install --frozen-lockfile' }, { name: 'build', run: 'yarn run build' }]);
    assert.equal(file.test, undefined);
    assert.deepEqual(file.services.web, { type: 'steps', ports: [{ port: 3000, routes: [{ path: '/' }] }], steps: [{ run: 'yarn run start' }] });
  });
});

describe('svc init refuses what it cannot do', () => {
  test('an existing svc.yml is kept unless --force', async () => {
    const dir = path.join(scratch, 'kept');
    await cp(path.join(fixtures, 'procfile'), dir, { recursive: true });
    await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n');
    const refused = await run(initCommand, ['kept']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /svc\.yml exists; pass --force to replace it/);
    assert.equal(await readFile(path.join(dir, 'svc.yml'), 'utf8'), 'schema: svc/v1\n');
    assert.equal((await run(initCommand, ['kept', '--force'])).code, 0);
    assert.match(await readFile(path.join(dir, 'svc.yml'), 'utf8'), /worker:/);
  });

  test('a directory with none of the files exits 1 and writes nothing', async () => {
    const empty = await mkdtemp(path.join(scratch, 'empty-'));
    const result = await run(initCommand, [empty]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /found none of \.devcontainer\/devcontainer\.json, .*package\.json/);
  });

  test('a devcontainer.json that is not JSONC exits 1 naming the file', async () => {
    const dir = path.join(scratch, 'broken');
    await cp(path.join(fixtures, 'devcontainer'), dir, { recursive: true });
    await writeFile(path.join(dir, '.devcontainer', 'devcontainer.json'), '{ "image": ');
    const result = await run(initCommand, ['broken']);
    assert.deepEqual([result.code, result.stderr.startsWith('svc init: .devcontainer/devcontainer.json is not valid JSONC: ')], [1, true]);
  });

  test('no schema line, even when signed in: the editor in the pod has the schema built in and may not reach the console', async () => {
    const dir = path.join(scratch, 'with-schema');
    await cp(path.join(fixtures, 'node'), dir, { recursive: true });
    const result = await run(initCommand, ['with-schema', '--stdout'], { SVC_URL: 'https://svc.example.com' });
    assert.equal(result.code, 0);
    assert.doesNotMatch(result.stdout, /yaml-language-server|\$schema|svc\.example\.com/);
    assert.match(result.stdout, /^# Written by svc init from package\.json\./);
    assert.match(result.stdout, /^schema: svc\/v1$/m);
  });
});

const redisMissing = (await installedRedisMajor()) === 7 ? false : 'Redis 7 is not installed; apt-get install redis-server';

describe('the compose repository\'s landscape runs', { skip: managedSkip || redisMissing }, () => {
  let server: TestServer;
  let driver: RuntimeDriver;
  let repository: BareRepository;
  let tools: string;
  let ws: number | undefined;

  before(async () => {
    ({ server, driver, tools } = await startManagedServer());
  });
  after(async () => {
    if (driver) await removeWorkspaces(driver, [ws]);
    if (server) await removeManagedInstances(server.server.config.dataDir);
    await server?.close();
    await repository?.remove();
    await rm(tools, { recursive: true, force: true });
  });

  test('svc init\'s file Syncs and web answers with what postgres says', async () => {
    const { dir } = await initialized('compose', 'compose-synced');
    const files = Object.fromEntries(await Promise.all(['svc.yml', 'web.js', 'docker-compose.yml'].map(async (f) => [f, await readFile(path.join(dir, f), 'utf8')])));
    repository = await createBareRepository(files);
    const { admin } = server;
    const org = (await admin.post('/orgs', { name: 'Init' })).body.id;
    const team = (await admin.post('/teams', { org_id: org, name: 'Init' })).body.id;
    const created = await admin.post('/workspaces', { team_id: team, name: 'compose', storage_gib: 1, git: { provider: 'git', repo: repository.url } });
    assert.equal(created.status, 202, created.text);
    ws = Number(created.body.target.split('/')[2]);
    assert.equal((await operationFinished(admin, created.body.id)).state, 'succeeded');
    const plan = await admin.get(`/workspaces/${ws}/landscape/plan`);
    assert.equal(plan.status, 200, plan.text);
    const synced = await admin.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
    assert.equal(synced.status, 202, synced.text);
    const done = await operationFinished(admin, synced.body.id);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    const answer = await until(async () => {
      const web = (await driver.replicaStates({ id: ws!, uid: 0, storageGib: 0 })).find((r) => r.service === 'web' && r.address);
      const response = web && (await fetch(`http://${web.address!.host}:8080/`).catch(() => undefined));
      const text = response && (await response.text());
      return response?.status === 200 ? text : undefined;
    }, 'web to answer 200');
    assert.equal(answer, 'db says 42; redis at set');
  });
});

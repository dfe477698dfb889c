// A developer's first day, end to end (issue 34, "Tests must show", last bullet), with real parts only: an "internet"
// host (198.51.100.x, its own namespace, resolver, npm registry and git server behind basic auth), the real server
// with the local driver, a managed PostgreSQL 16, the router and the real CLI. The developer stores a token with
// `svc git-credentials add`, creates a workspace from the private repository, and `prepare` (`npm install`) installs
// the app's dependency from that registry by itself (Stages shows it); Sync starts the managed database and `web`;
// a row written with psql in the editor pod comes back through the dev URL, formatted by the installed package;
// an edit is committed and pushed from the pod and upstream has it. Needs root and scripts/setup-postgres.sh's PostgreSQL 16.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { rm } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { startInternetHost, type InternetHost } from './helpers/internet-host.ts';
import { managedSkip as skip, removeManagedInstances, startManagedServer } from './helpers/managed-landscape.ts';
import { runSvc } from './helpers/process.ts';
import type { TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const run = promisify(execFile);
const TOKEN = 'tok-firstday-7e2a91c4';

const svcYml = `schema: svc/v1
prepare:
  - name: Install
    run: npm install --no-audit --no-fund
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
        routes: [{ path: / }]
    health: { port: 8080 }
    env:
      DATABASE_URL: \${{ services.db.dsn }}
`;
// psql from the host's /usr (bound read-only in pods) reads the notes; the installed package formats them
const webJs = `const http = require('node:http');
const { execFile } = require('node:child_process');
const format = require('note-format');
http.createServer((req, res) => {
  execFile('psql', [process.env.DATABASE_URL, '-tAc', 'SELECT body FROM notes ORDER BY body'], (error, stdout, stderr) => {
    res.statusCode = error ? 503 : 200;
    res.end(error ? stderr || error.message : format(stdout.trim().split('\\n')));
  });
}).listen(8080, '0.0.0.0');
`;

let internet: InternetHost;
let server: TestServer;
let driver: RuntimeDriver;
let tools = '';
let dev: ApiClient;
let bare = '';
let repoUrl = '';
let ws = 0;
let svcEnv: Record<string, string>;

before(async () => {
  if (skip) return;
  internet = await startInternetHost();
  await internet.publishPackage('note-format', '1.2.0', { 'index.js': "module.exports = (notes) => 'notes (note-format ' + require('./package.json').version + '): ' + notes.join(', ') + '\\n';\n" });
  const repository = await internet.addRepository('first-day', {
    'svc.yml': svcYml,
    'web.js': webJs,
    'package.json': JSON.stringify({ name: 'first-day', version: '1.0.0', private: true, dependencies: { 'note-format': '^1.2.0' } }, null, 2),
    '.npmrc': `registry=${internet.registry}\npackage-lock=false\n`,
    '.gitignore': 'node_modules/\n',
  }, { account: { username: 'dev', password: TOKEN } });
  [bare, repoUrl] = [repository.path, repository.url];
  ({ server, driver, tools } = await startManagedServer({}, undefined, { podDns: [internet.address] }));
  const person = await createPerson(server.admin, 'first-day@example.com');
  dev = person.key;
  svcEnv = { SVC_URL: server.url, SVC_TOKEN: dev.auth.token!, XDG_CONFIG_HOME: tools };
});

after(async () => {
  if (skip) return;
  if (driver) await removeWorkspaces(driver, [ws]);
  if (server) await removeManagedInstances(server.server.config.dataDir);
  await server?.close();
  await internet?.close();
  if (tools) await rm(tools, { recursive: true, force: true });
});

const svc = async (...args: string[]) => {
  const done = await runSvc(args, svcEnv);
  assert.equal(done.code, 0, `svc ${args.join(' ')}: ${done.stdout}\n${done.stderr}`);
  return done.stdout;
};
const inPod = (script: string) => svc('exec', String(ws), '--', 'bash', '-c', `export GIT_TERMINAL_PROMPT=0 && cd /data/app && ${script}`);

/** A request to the router for the workspace's dev URL (fetch cannot set Host). */
function devUrl(urlPath: string): Promise<{ status: number; text: string }> {
  const port = Number(new URL(server.url).port);
  const host = `w${ws}.${server.server.config.workspaceDomain}`;
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: urlPath, headers: { host, 'svc-authorization': `Bearer ${dev.auth.token}` }, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text }));
    });
    request.on('error', reject);
    request.end();
  });
}

test('the first day: private clone with a stored token, prepare installs from the registry by itself, Sync, the dev URL shows the database\'s rows, edit, commit, push', { skip }, async () => {
  // a token for the git host, then a workspace of one's own from the private repository
  assert.match(await svc('git-credentials', 'add', internet.name, '--username', 'dev', '--password', TOKEN), new RegExp(`^Added your git credential for ${internet.name.replace(/\./g, '\\.')} \\(user dev\\)\\.\\n$`));
  const org = (await dev.post('/orgs', { name: 'First Day' })).body.id;
  const team = (await dev.post('/teams', { org_id: org, name: 'First Day' })).body.id;
  const created = await dev.post('/workspaces', { team_id: team, name: 'first-day', storage_gib: 1, git: { provider: 'git', repo: repoUrl } });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  const creation = await operationFinished(dev, created.body.id);
  assert.equal(creation.state, 'succeeded', JSON.stringify(creation));
  assert.equal((await dev.get(`/workspaces/${ws}`)).body.status_detail, 'Workspace is running');

  // prepare ran by itself after the clone: Stages shows it, npm fetched the package from the internet host's registry
  const stage = (await dev.get(`/workspaces/${ws}/stages/prepare`)).body;
  assert.deepEqual(
    { runs: stage.runs.length, state: stage.current.state, trigger: stage.current.trigger, steps: stage.current.steps.map((s: any) => [s.name, s.state, s.exit_code]) },
    { runs: 1, state: 'success', trigger: 'clone', steps: [['Install', 'success', 0]] },
  );
  const log = await dev.get(`/workspaces/${ws}/stages/prepare/runs/${stage.current.id}/steps/1/logs`);
  assert.match(log.text, /added 1 package/);
  assert.equal(await inPod('node -p "require(\'note-format/package.json\').version" && git status --porcelain'), '1.2.0\n');

  // Sync: the managed PostgreSQL and web start; the dev URL is served
  await dev.put(`/workspaces/${ws}/secrets/DB_PASSWORD`, { value: 'first day password' });
  const plan = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const sync = await dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(sync.status, 202, sync.text);
  const synced = await operationFinished(dev, sync.body.id);
  assert.equal(synced.state, 'succeeded', JSON.stringify(synced));
  await until(async () => ((await dev.get(`/workspaces/${ws}/landscape`)).body.dev_url.state === 'served' ? true : undefined), 'the dev URL to be served');

  // data written with psql in the editor pod (its connection values are there) comes back through the dev URL
  assert.equal(await inPod(`psql -qc "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('buy milk'), ('ship it')"`), '');
  const answer = await until(async () => {
    const got = await devUrl('/');
    return got.status === 200 ? got : undefined;
  }, 'the dev URL to answer with the rows');
  assert.equal(answer.text, 'notes (note-format 1.2.0): buy milk, ship it\n');

  // edit, commit, push: upstream has the commit, by the developer
  const pushed = await inPod(`sed -i 's/ORDER BY body/ORDER BY body DESC/' web.js && git commit -qam "newest notes first" && git push -q origin HEAD:main && git status --porcelain --branch`);
  assert.equal(pushed, '## main...origin/main\n');
  const upstream = await run('git', ['-C', bare, 'log', '-2', '--format=%an <%ae> %s', 'main']);
  assert.equal(upstream.stdout, 'first-day <first-day@example.com> newest notes first\ninternet <internet@example.test> first\n');
  assert.match((await run('git', ['-C', bare, 'show', 'main:web.js'])).stdout, /ORDER BY body DESC/);
});

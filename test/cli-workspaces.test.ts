// The CLI driving a workspace for real, as processes against a real server: create from a local git repository,
// variables and secrets, sync (a missing secret named in the plan with its position, the Sync refused, then applied),
// the landscape table, logs, stages, events, sleep and wake, delete, restore and purge.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { logTime } from '../src/cli/output.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { runSvc, startSvc, type SvcProcess } from './helpers/process.ts';
import { until } from './helpers/wait.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const svcYml = `schema: svc/v1
prepare:
  - name: say hello
    run: echo hello from prepare
test:
  - name: fails
    run: echo boom; exit 3
  - name: never runs
    run: echo never
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes:
          - path: /
    env:
      GREETING: \${{ env.GREETING }}
      TOKEN: \${{ secrets.TOKEN }}
`;

const webJs = `const http = require('node:http');
console.log('greeting ' + process.env.GREETING);
console.log('token has ' + process.env.TOKEN.length + ' chars');
http.createServer((req, res) => res.end('hi')).listen(Number(process.env.PORT), '0.0.0.0', () => console.log('listening'));
`;

let server: TestServer;
let dev: ApiClient;
let repository: BareRepository;
let configHome: string;
let ws: number | undefined;

const env = (extra: Record<string, string> = {}) => ({ XDG_CONFIG_HOME: configHome, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_TEAM: undefined, SVC_BROWSER: 'true', SVC_WORKSPACE: 'store', ...extra });
const svc = (...args: string[]) => runSvc(args, env());
const start = (...args: string[]) => startSvc(args, env());


async function stopped(process: SvcProcess): Promise<void> {
  process.child.kill('SIGTERM');
  await process.exited;
}

before(async () => {
  server = await startTestServer({ env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true' } });
  const owner = await createPerson(server.admin, 'cli-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'CLI' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'CLI team' })).body.id;
  const developer = await createPerson(server.admin, 'cli-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  dev = developer.key;
  repository = await createBareRepository({ 'svc.yml': svcYml, 'svc.broken.yml': 'schema: svc/v1\nservices:\n  web:\n    type: stepz\n', 'web.js': webJs });
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-ws-'));
  const login = await runSvc(['login', server.url, '--token', dev.auth.token!], env());
  assert.equal(login.code, 0, login.stderr);
});

after(async () => {
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
  await repository?.remove();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

test('ws create from git follows the operation to Running, in the only team of the person', async () => {
  const created = await svc('ws', 'create', 'shop', '--git', repository.url);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^shop \((\d+)\): running, Workspace is running\n$/);
  ws = Number(/\((\d+)\)/.exec(created.stdout)![1]);
  assert.match(created.stderr, /Creating shop \(\d+\): /, 'progress lines without a terminal');
  const shown = await svc('ws', 'show', 'shop', '--json');
  assert.equal(JSON.parse(shown.stdout).git.provider, 'git');
  const taken = await svc('ws', 'create', 'shop');
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /^.+: The team has a workspace named "shop" already\.\n$/);
});

test('ws list, show and rename by name or id', async () => {
  const renamed = await svc('ws', 'rename', 'shop', 'store');
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.equal(renamed.stdout, `Renamed shop (${ws}) to store.\n`);
  const list = await svc('ws', 'list');
  assert.match(list.stdout, new RegExp(`^ID\\s+NAME\\s+TEAM\\s+STATE\\s+STATUS\\n${ws}\\s+store\\s+CLI team\\s+running\\s+Workspace is running\\n$`));
  const shown = await svc('ws', 'show', String(ws));
  assert.match(shown.stdout, /^Workspace: +store \(\d+\)\nState: +running \(Workspace is running\)\nEditor: +http:\/\/ide-w\d+\.localhost:\d+\//);
  const typo = await svc('ws', 'show', 'stroe');
  assert.equal(typo.code, 1);
  assert.equal(typo.stderr, 'Not found: Team CLI team has no workspace named "stroe". Did you mean "store"?\n');
  const team = await svc('ws', 'list', '--team', 'CLI tem');
  assert.equal(team.code, 1);
  assert.equal(team.stderr, 'Not found: You are in no team "CLI tem". Did you mean "CLI team"?\n');
});

test('env and secret set, list and rm; a secret read from stdin is never echoed', async () => {
  assert.equal((await svc('env', 'set', 'GREETING=hello there')).code, 0);
  assert.equal((await svc('env', 'set', 'EXTRA', 'x')).code, 0);
  assert.equal((await svc('env', 'rm', 'EXTRA')).code, 0);
  const variables = await svc('env', 'list');
  assert.match(variables.stdout, /^NAME\s+VALUE\s+UPDATED\nGREETING\s+hello there\s+\d{4}-/);
  assert.doesNotMatch(variables.stdout, /EXTRA/);
  const badName = await svc('env', 'set', '1BAD=x');
  assert.equal(badName.code, 1);
  assert.equal(badName.stderr, 'Invalid input: "1BAD" must be a variable name: letters, digits and _, not starting with a digit, at most 128 characters\n');
  const reserved = await svc('env', 'set', 'SVC_X', 'y');
  assert.equal(reserved.code, 1);
  assert.match(reserved.stderr, /^Invalid input: SVC_X starts with SVC_, which is reserved for the platform\.\n {2}path \/name: must not start with SVC_\n$/);

  const other = await svc('secret', 'set', 'OTHER', '--value', 'on-the-line');
  assert.equal(other.code, 0, other.stderr);
  assert.equal((await svc('secret', 'rm', 'OTHER')).code, 0);
  const secrets = await svc('secret', 'list', '--json');
  assert.deepEqual(JSON.parse(secrets.stdout), []);
  assert.equal((await svc('secret', 'rm', 'OTHER')).code, 1);
});

test('a missing secret: the plan names it with its position, the Sync is refused; a broken profile with its errors', async () => {
  const missing = await svc('sync', '--yes');
  assert.equal(missing.code, 1);
  assert.match(missing.stdout, /^ {2}secret TOKEN has no value \(line \d+, column \d+\): set it with "svc secret set TOKEN"; Sync refuses until then$/m);
  assert.match(missing.stderr, /^Secrets have no value: .*TOKEN.*\n {2}svc\.yml:\d+:\d+: missing-secret: secret TOKEN has no value\n$/m);
  const broken = await svc('sync', '--profile', 'broken', '--dry-run');
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /^The landscape file has errors: svc\.broken\.yml has an error at line 4, column 11: .+\n {2}svc\.broken\.yml:4:11: enum: .+\n$/);
});

test('secret set reads the value from stdin; sync --yes applies the plan and shows the landscape', async () => {
  const setting = start('secret', 'set', 'TOKEN');
  setting.child.stdin.end('s3cret-value\n');
  assert.equal(await setting.exited, 0, setting.stderr());
  assert.doesNotMatch(setting.stdout() + setting.stderr(), /s3cret/);
  assert.match((await svc('secret', 'list')).stdout, /^NAME\s+UPDATED\nTOKEN\s+\d{4}-/);

  const refused = await svc('sync');
  assert.equal(refused.code, 2);
  assert.match(refused.stdout, /^Plan for store \(\d+\) from svc\.yml:\n\+ web \(steps\)\n~ prepare: steps\n~ test: steps\n$/);
  assert.match(refused.stderr, /not syncing without a confirmation: standard input is not a terminal; pass --yes/);
  const synced = await svc('sync', '--yes');
  assert.equal(synced.code, 0, synced.stderr);
  assert.match(synced.stdout, /\+ web \(steps\)\n[\s\S]*Synced\.\n\nLandscape of store \(\d+\): /);
  const again = await svc('sync', '--yes', '--json');
  assert.equal(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).synced, false, 'nothing to sync');
});

test('svc landscape shows the banner, a table of services and the dev URL', async () => {
  await until(async () => ((await dev.get(`/workspaces/${ws}/landscape`)).body.services[0].status === 'running' ? true : undefined), 'web running');
  const shown = await svc('landscape');
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^Landscape of store \(\d+\): in-sync \(In sync\); svc\.yml synced \d{4}-.+\n\nSERVICE\s+TYPE\s+STATUS\s+READY\s+DETAIL\nweb\s+steps\s+running\s+1\/1/);
  assert.match(shown.stdout, /\nDev URL: http:\/\/w\d+\.localhost:\d+\/ served \(Served by web\)\n$/);
  assert.equal(JSON.parse((await svc('landscape', '--json')).stdout).services[0].name, 'web');
});

test('logs --tail prints the last lines after their times; -f follows; the secret and variable reached the service', async () => {
  const lines = await until(async () => {
    const read = (await dev.get(`/workspaces/${ws}/landscape/services/web/logs`)).body.lines;
    // the probe's line and the server's own last line can land in either order: wait for both, then nothing follows
    const has = (text: string) => read.some((l: { text: string }) => l.text === text);
    return has('web is ready') && has('listening') ? read : undefined;
  }, 'web ready and listening');
  const tail = await svc('logs', 'web', '--tail', '2');
  assert.equal(tail.code, 0, tail.stderr);
  const format = (l: { stream: string; text: string }) => `${l.stream === 'system' ? '[svc] ' : ''}${l.text}\n`;
  assert.match(tail.stdout, /^(\d\d:\d\d:\d\d\.\d{3} .*\n){2}$/);
  assert.equal(tail.stdout, lines.slice(-2).map((l: { at: string; stream: string; text: string }) => `${logTime(l.at)} ${format(l)}`).join(''));
  const plain = await svc('logs', 'web', '--tail', '2', '--no-timestamps');
  assert.equal(plain.stdout, lines.slice(-2).map(format).join(''));
  const all = await svc('logs', 'web', '--json');
  const texts = JSON.parse(all.stdout).lines.map((l: { text: string }) => l.text);
  assert.ok(texts.includes('greeting hello there') && texts.includes('token has 12 chars'), texts.join('\n'));
  const following = start('logs', 'web', '-f', '--tail', '2');
  const last = tail.stdout.split('\n').at(-2)!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await following.waitFor(new RegExp(`${last}\n$`));
  assert.equal(following.stdout(), tail.stdout);
  await stopped(following);
});

test('service stop and start flip the run switch; a misspelt service is answered with the closest name and the services', async () => {
  const stopped = await svc('service', 'stop', 'web');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /^Stopped web in store \(\d+\)\.\nweb: stopped.*; its run switch is off\.\n$/);
  assert.equal((await dev.get(`/workspaces/${ws}/landscape`)).body.services[0].running, false);
  const started = await svc('service', 'start', 'web', '--json');
  assert.equal(started.code, 0, started.stderr);
  assert.equal(JSON.parse(started.stdout).running, true);
  await until(async () => ((await dev.get(`/workspaces/${ws}/landscape`)).body.services[0].status === 'running' ? true : undefined), 'web running again');
  const unknown = 'Not found: The landscape of store has no service "wbe". Did you mean "web"? Its services: "web".\n';
  for (const args of [['logs', 'wbe'], ['service', 'stop', 'wbe']]) {
    const typo = await svc(...args);
    assert.equal(typo.code, 1);
    assert.equal(typo.stderr, unknown);
  }
  const exec = await svc('exec', 'store', '--service', 'wbe', '--', 'true');
  assert.equal(exec.code, 1);
  assert.equal(exec.stderr, unknown);
});

test('stage run streams each step log and exits 0 on success, 1 on failure; stage show lists the steps', async () => {
  const prepare = await svc('stage', 'run', 'prepare');
  assert.equal(prepare.code, 0, prepare.stderr);
  assert.match(prepare.stdout, /^Started prepare run \d+ in store \(\d+\)\.\n▶ \[1\/1\] say hello\n {2}hello from prepare\n✓ say hello success \(\d+\.\ds\)\nprepare run \d+: success/);
  const failing = await svc('stage', 'run', 'test');
  assert.equal(failing.code, 1);
  assert.match(failing.stdout, / {2}boom\n✗ fails failure: exit 3 \([^)]+\)\n- never runs skipped\ntest run \d+: failure/);
  const shown = await svc('stage', 'show', 'test');
  assert.match(shown.stdout, /#\s+STEP\s+STATE\s+EXIT\s+TIME\n1\s+fails\s+failure\s+3\s+[\d.]+s\n2\s+never runs\s+skipped/);
  assert.equal((await svc('stage', 'run', 'nonsense')).code, 2);
});

test('events prints one line per event; teardown, sleep and wake follow their operations', async () => {
  const events = start('events');
  try {
    await events.waitFor(/ready {2}connected/);
    const teardown = await svc('teardown');
    assert.equal(teardown.code, 0, teardown.stderr);
    assert.match(teardown.stdout, /^Torn down/);
    await events.waitFor(/landscape\.updated {2}team \d+ ws \d+/);
    const slept = await svc('ws', 'sleep', 'store');
    assert.equal(slept.code, 0, slept.stderr);
    assert.match(slept.stdout, /^store \(\d+\): sleeping, Asleep/);
    await events.waitFor(/workspace\.updated {2}team \d+ ws \d+ {2}store: sleeping \(Asleep\)/);
  } finally {
    await stopped(events);
  }
  const woken = await svc('ws', 'wake', 'store', '--json');
  assert.equal(woken.code, 0, woken.stderr);
  assert.equal(JSON.parse(woken.stdout).state, 'running');
  const open = await svc('ws', 'open', 'store', '--json');
  assert.match(JSON.parse(open.stdout).sign_in_url, /^http:\/\/ide-w\d+\.localhost:\d+\/.+token=/);
});

test('delete, restore by name among the deleted, purge only with a confirmation', async () => {
  const deleted = await svc('ws', 'delete', 'store');
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match((await svc('ws', 'list', '--deleted')).stdout, /store\s+CLI team\s+\S+\s+purged after/);
  const restored = await svc('ws', 'restore', 'store');
  assert.equal(restored.code, 0, restored.stderr);
  assert.equal((await svc('ws', 'delete', String(ws))).code, 0);
  const refused = await svc('ws', 'purge', String(ws));
  assert.equal(refused.code, 2);
  const purged = await svc('ws', 'purge', String(ws), '--yes');
  assert.equal(purged.code, 0, purged.stderr);
  assert.equal(purged.stdout, `Purged store (${ws}).\n`);
  assert.equal((await dev.get(`/workspaces/${ws}`)).status, 404);
  ws = undefined;
});

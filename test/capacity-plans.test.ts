// The installation's plans from the operator's plans file (docs/capacity.md): GET /plans lists them with their
// limits, a workspace gets the default plan and its storage, a plan that does not exist is refused pointing at it,
// in the create request and in svc.yml (line and column); a bad plans file stops the server with the place.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { parsePlansFile } from '../src/capacity/plans-file.ts';
import { ConfigError } from '../src/core/config.ts';
import { operationFinished } from './helpers/wait.ts';
import { removeWorkspaces, stoppedWorkspace } from './helpers/workspaces.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { PLANS_FILE } from './helpers/plans.ts';


let scratch: string;
let server: TestServer;
let dev: ApiClient;
let team: number;
let ws: number;
let volume: string;
const created_: number[] = [];

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-plans-'));
  await writeFile(path.join(scratch, 'plans.yml'), PLANS_FILE);
  server = await startTestServer({ env: { SVC_PLANS_FILE: path.join(scratch, 'plans.yml') } });
  const owner = await createPerson(server.admin, 'plans-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Plans' })).body.id;
  team = (await owner.key.post('/teams', { org_id: org, name: 'Plans' })).body.id;
  dev = owner.key;
  ({ id: ws, volume } = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: owner.id, name: 'plans' }));
});
after(async () => {
  if (server) await removeWorkspaces(server.server.driver, created_);
  await server?.close();
  await rm(scratch, { recursive: true, force: true });
});

test('GET /plans lists the workspace and service plans of the plans file with their limits and defaults', async () => {
  const workspace = (await dev.get('/plans?kind=workspace')).body.items;
  assert.deepEqual(workspace, [
    { id: 'dev', kind: 'workspace', provider: null, title: 'Development', default: true, cpu_millis: 1500, memory_mib: 3072, storage_gib: 7 },
    { id: 'big', kind: 'workspace', provider: null, title: 'big', default: false, cpu_millis: 4000, memory_mib: 8192, storage_gib: 40 },
  ]);
  const service = (await dev.get('/plans?kind=service')).body.items;
  assert.deepEqual(service, [
    { id: 'tiny', kind: 'service', provider: null, title: 'tiny', default: true, cpu_millis: 100, memory_mib: 128, max_replicas: 3, availability: 'always' },
    { id: 'web', kind: 'service', provider: null, title: 'Web', default: false, cpu_millis: 500, memory_mib: 512, max_replicas: 8, availability: 'on-demand' },
  ]);
});

test('a workspace created without a plan gets the default plan and its storage; an unknown plan is refused at /plan', async () => {
  const refused = await dev.post('/workspaces', { team_id: team, name: 'nope', plan: 'standard' });
  assertProblem(refused, 422, 'validation');
  assert.equal(refused.body.detail, '"standard" is not a workspace plan of this installation; choose dev or big.');
  assert.deepEqual(refused.body.errors, [{ pointer: '/plan', message: 'is not a workspace plan of this installation (dev or big)' }]);
  const created = await dev.post('/workspaces', { team_id: team, name: 'default-plan' });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  const shown = (await dev.get(`/workspaces/${id}`)).body;
  assert.deepEqual([shown.plan, shown.storage_gib], ['dev', 7]);
  created_.push(id);
  await operationFinished(dev, created.body.id);
  // GET /workspaces/{ws} carries the volume's use against its size (the console's usage bar)
  const usage = (await dev.get(`/workspaces/${id}`)).body.disk_usage;
  assert.equal(usage.limit_bytes, 7 * 2 ** 30);
  assert.ok(usage.bytes >= 0 && usage.percent === Math.floor((usage.bytes * 100) / usage.limit_bytes), JSON.stringify(usage));
});

const file = (service: string) => `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
${service}`;

test('svc.yml naming a service plan the installation lacks, or more replicas than its plan allows, is refused with line and column', async () => {
  const cases: Array<[string, { code: string; pointer: string; line: number; column: number; message: string }]> = [
    ['    plan: standard\n', { code: 'unknown-plan', pointer: '/services/web/plan', line: 7, column: 11, message: 'plan "standard" of service web is not a service plan of this installation; choose tiny or web' }],
    ['    maxReplicas: 4\n', { code: 'out-of-range', pointer: '/services/web/maxReplicas', line: 7, column: 18, message: 'maxReplicas of service web is 4, more than plan tiny allows (3)' }],
    ['    replicas: 4\n', { code: 'out-of-range', pointer: '/services/web/replicas', line: 7, column: 15, message: 'replicas of service web is 4, more than the default maxReplicas of plan tiny (3)' }],
  ];
  for (const [service, expected] of cases) {
    await writeFile(path.join(volume, 'svc.yml'), file(service));
    const answer = await dev.get(`/workspaces/${ws}/landscape/plan`);
    assertProblem(answer, 422, 'invalid-landscape');
    assert.deepEqual(answer.body.errors.map(({ code, pointer, line, column, message }: Record<string, unknown>) => ({ code, pointer, line, column, message })), [expected], service);
  }
  await writeFile(path.join(volume, 'svc.yml'), file('    plan: web\n    replicas: 8\n'));
  const planned = await dev.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(planned.status, 200, planned.text);
});

test('a plans file that breaks a rule is refused with the place and the rule', () => {
  const message = (text: string) => {
    try {
      parsePlansFile(text, 'plans.yml');
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  assert.throws(() => parsePlansFile('workspace: [', 'plans.yml'), ConfigError);
  assert.equal(message(PLANS_FILE.replace('default: dev', 'default: huge')), 'plans.yml: workspace.default is "huge", which is not one of its plans (dev, big)');
  assert.equal(message(PLANS_FILE.replace('cpu: 0.1,', 'cpu: 0.1, disk: 1,')), 'plans.yml: service.plans.tiny: unknown key "disk"');
  assert.equal(message(PLANS_FILE.replace('memory: 128MiB', 'memory: lots')), 'plans.yml: service.plans.tiny.memory must be a size such as 512MiB or 4GiB');
  assert.equal(message(PLANS_FILE.replace('maxReplicas: 3', 'maxReplicas: 300')), 'plans.yml: service.plans.tiny.maxReplicas must be <= 100');
});

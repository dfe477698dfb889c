// A registry that trickles (issue 33, item 3): one layer of its image comes one byte a second (a loopback front of
// Debian's docker-registry, test/helpers/oci.ts). With a short --registry-stall-timeout, a Sync of that image fails
// as image-unavailable `stalled` naming the timeout; while one team has more pulls of it in flight than the server
// has operation workers (five workspace creates with it as base_image, four workers), another team's workspace is
// claimed at once and created, not queued behind the trickles.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { createBareRepository, type BareRepository } from './helpers/git.ts';
import { layerDigests, pushImage, startRegistry, startRegistryProxy, type RegistryProxy, type TestRegistry } from './helpers/oci.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const STALL_SECONDS = 6;
const busybox = { 'bin/busybox': { busybox: true as const }, 'bin/sh': { symlink: 'busybox' }, 'bin/sleep': { symlink: 'busybox' } };

let registry: TestRegistry;
let proxy: RegistryProxy;
let slowLayer: string;
let server: TestServer;
let driver: RuntimeDriver;
let repository: BareRepository;
let slowTeam: { client: ApiClient; team: number };
let otherTeam: { client: ApiClient; team: number };
const workspaces: number[] = [];
const image = () => `${proxy.host}/slow/base:1`;

async function teamOf(email: string, name: string): Promise<{ client: ApiClient; team: number }> {
  const client = (await createPerson(server.admin, email)).key;
  const org = (await client.post('/orgs', { name })).body.id;
  return { client, team: (await client.post('/teams', { org_id: org, name })).body.id };
}

async function createWorkspace(of: { client: ApiClient; team: number }, body: Record<string, unknown>): Promise<string> {
  const created = await of.client.post('/workspaces', { team_id: of.team, storage_gib: 1, ...body });
  assert.equal(created.status, 202, created.text);
  workspaces.push(Number(created.body.target.split('/')[2]));
  return created.body.id;
}

const stalledDetail = () => new RegExp(`the registry sent (nothing|only \\d+ bytes?) in ${STALL_SECONDS} s while sending the blob ${slowLayer} \\(--registry-stall-timeout\\)`);

before(async () => {
  registry = await startRegistry();
  const pushed = await pushImage(registry, 'slow/base:1', { layers: [busybox, { 'etc/motd': 'slowly\n' }], cmd: ['/bin/sleep', '600'] });
  [, slowLayer] = await layerDigests(registry, 'slow/base', pushed);
  proxy = await startRegistryProxy(registry, { trickleBlobs: [slowLayer] });
  server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', SVC_INSECURE_REGISTRIES: proxy.host, SVC_REGISTRY_STALL_TIMEOUT: String(STALL_SECONDS) },
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })),
  });
  slowTeam = await teamOf('slow@example.com', 'Slow');
  otherTeam = await teamOf('other@example.com', 'Other');
  repository = await createBareRepository({ 'svc.yml': `schema: svc/v1\nservices:\n  app:\n    type: container\n    image: ${image()}\n` });
});

after(async () => {
  await removeWorkspaces(driver, workspaces);
  await server?.close();
  await repository?.remove();
  await proxy?.close();
  await registry?.close();
});

test('a Sync of an image whose layer trickles fails as image-unavailable stalled, naming the stall timeout', async () => {
  const created = await createWorkspace(slowTeam, { name: 'sync', git: { provider: 'git', repo: repository.url } });
  assert.equal((await operationFinished(slowTeam.client, created)).state, 'succeeded');
  const ws = workspaces.at(-1);
  const plan = await slowTeam.client.get(`/workspaces/${ws}/landscape/plan`);
  assert.equal(plan.status, 200, plan.text);
  const started = await slowTeam.client.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash });
  assert.equal(started.status, 202, started.text);
  const sync = await operationFinished(slowTeam.client, started.body.id);
  assert.equal(sync.state, 'failed');
  assert.equal(sync.error.type, 'urn:svc:problem:image-unavailable');
  assert.equal(sync.error.status, 504);
  assert.equal(sync.error.reason, 'stalled');
  assert.match(sync.error.detail, stalledDetail());
  await until(async () => (proxy.trickling === 0 ? true : undefined), 'the stalled download to be closed');
});

test("while one team has more trickling pulls than there are workers, another team's workspace is claimed at once and created", async () => {
  const slow: string[] = [];
  for (let i = 0; i < 5; i++) slow.push(await createWorkspace(slowTeam, { name: `slow-${i}`, base_image: image() }));
  await until(async () => (proxy.trickling > 0 ? true : undefined), 'the slow layer to be trickling');
  const states = async () => Promise.all(slow.map(async (id) => (await slowTeam.client.get(`/operations/${id}`)).body.state as string));

  const other = await createWorkspace(otherTeam, { name: 'other' });
  const claimed = await until(async () => {
    const state = (await otherTeam.client.get(`/operations/${other}`)).body.state;
    return state === 'pending' ? undefined : state;
  }, "the other team's create to be claimed");
  assert.ok(['running', 'succeeded'].includes(claimed), claimed);
  assert.deepEqual((await states()).sort(), ['pending', 'pending', 'running', 'running', 'running'], 'the slow team holds three of the four workers, the rest of its creates wait; none has ended');
  assert.equal((await operationFinished(otherTeam.client, other)).state, 'succeeded');

  for (const id of slow) {
    const operation = await operationFinished(slowTeam.client, id);
    assert.equal(operation.state, 'failed', 'a pull that stalled never ends succeeded');
    assert.equal(operation.error.type, 'urn:svc:problem:workspace-failed');
    assert.match(operation.error.detail, stalledDetail());
  }
  await until(async () => (proxy.trickling === 0 ? true : undefined), 'the stalled downloads to be closed');
});

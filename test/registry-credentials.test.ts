// A team's container registry credentials through the real server: the API (add, replace, list without the
// password, remove; roles; bad input), sealed in the database, the CLI, and a private image pulled with them.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../src/core/secret-box.ts';
import { ImageFailure, ImageStore, pullImage } from '../src/images/index.ts';
import { teamCredentialsForImage } from '../src/images/team-credentials.ts';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { pushImage, startRegistry, type TestRegistry } from './helpers/oci.ts';
import { runSvc, startSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let owner: ApiClient;
let developer: ApiClient;
let viewer: ApiClient;
let outsider: ApiClient;
let team: number;
let configHome: string;

before(async () => {
  server = await startTestServer();
  const people = await Promise.all(['reg-owner', 'reg-dev', 'reg-viewer', 'reg-outsider'].map((name) => createPerson(server.admin, `${name}@example.com`)));
  [owner, developer, viewer, outsider] = people.map((p) => p.key);
  const org = (await owner.post('/orgs', { name: 'Registry Org' })).body.id;
  team = (await owner.post('/teams', { org_id: org, name: 'Registry Team' })).body.id;
  await owner.put(`/teams/${team}/members/${people[1].id}`, { role: 'developer' });
  await owner.put(`/teams/${team}/members/${people[2].id}`, { role: 'viewer' });
  configHome = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-registry-'));
});
after(async () => {
  await server?.close();
  if (configHome) await rm(configHome, { recursive: true, force: true });
});

const path_ = () => `/teams/${team}/registry-credentials`;

describe('the API', () => {
  test('a team admin adds credentials (201), replaces them (200); lists never show the password', async () => {
    const added = await owner.post(path_(), { registry: 'Registry.Example.com:5000', username: 'robot', password: 'first-secret' });
    assert.equal(added.status, 201, added.text);
    assert.deepEqual(Object.keys(added.body).sort(), ['created_at', 'registry', 'updated_at', 'username']);
    assert.equal(added.body.registry, 'registry.example.com:5000');
    const replaced = await owner.post(path_(), { registry: 'registry.example.com:5000', username: 'robot2', password: 'second-secret' });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal((await owner.post(path_(), { registry: 'index.docker.io', username: 'hub', password: 'x' })).body.registry, 'docker.io');
    const listed = await viewer.get(path_());
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.items.map((c: { registry: string; username: string }) => [c.registry, c.username]), [['docker.io', 'hub'], ['registry.example.com:5000', 'robot2']]);
    assert.doesNotMatch(listed.text, /secret/);
  });

  test('the password is sealed in the database and opens only for its team and registry', async () => {
    const row = (await server.server.database.pool.query('SELECT * FROM team_registry_credentials WHERE team_id = $1 AND registry = $2', [team, 'registry.example.com:5000'])).rows[0];
    assert.ok(!row.ciphertext.toString('latin1').includes('second-secret'));
    const secrets = new SecretBox(Buffer.from((await readFile(path.join(server.server.config.dataDir, 'secrets.key'), 'utf8')).trim(), 'base64'));
    assert.deepEqual(await teamCredentialsForImage(server.server.database.pool, secrets, team, 'registry.example.com:5000/app/api:1'), { username: 'robot2', password: 'second-secret' });
    assert.equal(await teamCredentialsForImage(server.server.database.pool, secrets, team, 'ghcr.io/app/api:1'), undefined);
    assert.equal((await teamCredentialsForImage(server.server.database.pool, secrets, team, 'busybox'))?.username, 'hub');
  });

  test('developers and viewers may read but not change; outsiders see no team', async () => {
    assertProblem(await developer.post(path_(), { registry: 'ghcr.io', username: 'x', password: 'y' }), 403, 'forbidden');
    assertProblem(await viewer.delete(`${path_()}/docker.io`), 403, 'forbidden');
    assertProblem(await outsider.get(path_()), 404, 'not-found');
    assertProblem(await outsider.post(path_(), { registry: 'ghcr.io', username: 'x', password: 'y' }), 404, 'not-found');
  });

  test('bad registries, usernames with a colon and missing passwords are refused with the field', async () => {
    for (const [body, pointer] of [
      [{ registry: 'https://ghcr.io', username: 'x', password: 'y' }, '/registry'],
      [{ registry: 'a..b', username: 'x', password: 'y' }, '/registry'],
      [{ registry: 'ghcr.io', username: 'a:b', password: 'y' }, '/username'],
      [{ registry: 'ghcr.io', username: 'x', password: '' }, '/password'],
      [{ registry: 'ghcr.io', username: 'x' }, '/password'],
    ] as const) {
      const answer = await owner.post(path_(), body);
      assertProblem(answer, 422, 'validation');
      assert.ok(answer.body.errors.some((e: { pointer: string }) => e.pointer === pointer), answer.text);
    }
  });

  test('remove answers 204, then 404; the list no longer has it', async () => {
    assert.equal((await owner.delete(`${path_()}/Docker.io`)).status, 204);
    assertProblem(await owner.delete(`${path_()}/docker.io`), 404, 'not-found');
    assert.deepEqual((await owner.get(path_())).body.items.map((c: { registry: string }) => c.registry), ['registry.example.com:5000']);
  });
});

describe('the CLI and a private registry', () => {
  let registry: TestRegistry;
  const credentials = { username: 'team', password: 'pa55word' };
  before(async () => {
    registry = await startRegistry({ basicAuth: credentials });
  });
  after(async () => registry?.close());

  const env = () => ({ XDG_CONFIG_HOME: configHome, SVC_URL: server.url, SVC_TOKEN: owner.auth.token, SVC_TEAM: 'Registry Team' });

  test('svc registry add reads the password from stdin; list and remove; the private image pulls with the team credentials', async () => {
    const image = `${registry.host}/private/app:1`;
    const pushed = await pushImage(registry, 'private/app:1', { layers: [{ 'hello.txt': 'private' }], credentials });
    const store = await ImageStore.open({ root: await mkdtemp(path.join(os.tmpdir(), 'svc-images-')), maxBytes: 1 << 30, insecureRegistries: [registry.host] });
    try {
      const secrets = new SecretBox(Buffer.from((await readFile(path.join(server.server.config.dataDir, 'secrets.key'), 'utf8')).trim(), 'base64'));
      const refused = await pullImage(store, image, { credentials: await teamCredentialsForImage(server.server.database.pool, secrets, team, image) }).catch((e: unknown) => e);
      assert.ok(refused instanceof ImageFailure && refused.reason === 'unauthorized', String(refused));

      const adding = startSvc(['registry', 'add', registry.host, '--username', credentials.username], env());
      adding.child.stdin.end(`${credentials.password}\n`);
      assert.equal(await adding.exited, 0, adding.stderr());
      assert.equal(adding.stdout(), `Added the credentials of Registry Team for ${registry.host} (user team).\n`);
      const listed = await runSvc(['registry', 'list'], env());
      assert.match(listed.stdout, new RegExp(`^REGISTRY\\s+USERNAME\\s+UPDATED\\n(.*\\n)*${registry.host.replace(/\./g, '\\.')}\\s+team\\s+\\d{4}-`));
      assert.doesNotMatch(listed.stdout + listed.stderr, /pa55word/);

      const pulled = await pullImage(store, image, { credentials: await teamCredentialsForImage(server.server.database.pool, secrets, team, image) });
      assert.equal(pulled.digest, pushed);
      assert.equal(await readFile(path.join(pulled.rootfs, 'hello.txt'), 'utf8'), 'private');

      const removed = await runSvc(['registry', 'remove', registry.host, '--json'], env());
      assert.equal(removed.code, 0, removed.stderr);
      assert.deepEqual(JSON.parse(removed.stdout), { registry: registry.host, deleted: true });
      const again = await runSvc(['registry', 'remove', registry.host], env());
      assert.equal(again.code, 1);
      assert.match(again.stderr, /Not found/);
      const noUser = await runSvc(['registry', 'add', registry.host], env());
      assert.equal(noUser.code, 2);
      assert.match(noUser.stderr, /--username is required/);
    } finally {
      await rm(store.root, { recursive: true, force: true });
    }
  });
});

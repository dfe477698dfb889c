// The image store's size limit and garbage collection through the server (SVC_IMAGES_MAX_SIZE, docs/images.md): a
// Sync whose image would pass the limit fails with image-unavailable `store-full` and changes nothing that runs
// (what runs is pinned, so collection cannot free it); once the landscape is torn down and the grace period has
// passed on the server's clock, the next Sync collects the images no landscape pins and pulls the new one.
// Chores are held off (SVC_CHORE_INTERVAL) so that moving the clock does not put the workspace to sleep.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { IMAGE_GRACE_MS } from '../src/images/image-source.ts';
import { startLandscapeWorkspace, type LandscapeWorkspace } from './helpers/landscape-workspace.ts';
import { pushImage, startRegistry, type TestRegistry } from './helpers/oci.ts';
import { rawRequest } from './helpers/raw-http.ts';
import { operationFinished, until } from './helpers/wait.ts';

const busybox = { 'bin/busybox': { busybox: true as const }, 'bin/httpd': { symlink: 'busybox' } };
const httpd = { entrypoint: ['/bin/httpd'], cmd: ['-f', '-p', '8080', '-h', '/www'] };
/** 2 MiB of base64 (about 1.5 MiB gzipped): busybox (2 MiB) and one such layer fit in 5 MiB, two do not. */
const filler = () => randomBytes(1536 * 1024).toString('base64');

let registry: TestRegistry;
let lw: LandscapeWorkspace;
let small: string;
let other: string;

const svcYml = (tag: string) => `schema: svc/v1
services:
  web:
    type: container
    image: ${registry.host}/test/${tag}
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080, mode: http-2xx }
`;

before(async () => {
  registry = await startRegistry();
  small = await pushImage(registry, 'test/one:1', { layers: [busybox, { 'www/index.html': 'one\n', 'opt/fill': filler() }], ...httpd });
  other = await pushImage(registry, 'test/two:1', { layers: [busybox, { 'www/index.html': 'two\n', 'opt/fill': filler() }], ...httpd });
  lw = await startLandscapeWorkspace({
    team: 'Store',
    workspace: 'store',
    files: { 'svc.yml': svcYml('one:1') },
    env: { SVC_INSECURE_REGISTRIES: registry.host, SVC_IMAGES_MAX_SIZE: '5MiB', SVC_CHORE_INTERVAL: '86400' },
  });
});

after(async () => {
  await lw?.close();
  await registry?.close();
});

const page = async () => {
  const answer = await rawRequest(Number(new URL(lw.server.url).port), `GET / HTTP/1.1\r\nHost: w${lw.ws}.localhost\r\nSvc-Authorization: Bearer ${lw.owner.auth.token}\r\nConnection: close`);
  return `${answer.status} ${answer.body}`;
};
const storedImages = async () => (await readdir(path.join(lw.server.server.config.dataDir, 'images', 'images', 'sha256'))).map((hex) => `sha256:${hex}`).sort();
const deployedRow = async () => (await lw.server.server.database.pool.query('SELECT hash, synced_at, images FROM landscapes WHERE workspace_id = $1', [lw.ws])).rows[0];

test('an image that would pass the size limit fails the Sync as store-full naming the limit; what runs is pinned and stays', async () => {
  assert.equal((await lw.sync()).state, 'succeeded');
  await until(async () => ((await page()) === '200 one\n' ? true : undefined), 'the first image to be served');
  const before = await deployedRow();

  await writeFile(lw.volumeFile('svc.yml'), svcYml('two:1'));
  const failed = await lw.sync();
  assert.equal(failed.state, 'failed');
  assert.equal(failed.error.type, 'urn:svc:problem:image-unavailable');
  assert.equal(failed.error.status, 507);
  assert.equal(failed.error.reason, 'store-full');
  assert.equal(failed.error.image, `${registry.host}/test/two:1@${other}`, "the image at the digest the plan showed");
  assert.match(failed.error.detail, /the image store would grow past its limit of 5 MiB \(.* used\); remove unused images or raise --images-max-size/);
  assert.deepEqual(await deployedRow(), before);
  assert.deepEqual(await storedImages(), [small], 'the pinned image stays; nothing of the refused one is kept');
  assert.equal(await page(), '200 one\n');
});

test('once torn down and past the grace period, the next Sync collects the image no landscape pins and pulls the new one', async () => {
  const teardown = await lw.owner.post(`/workspaces/${lw.ws}/landscape/teardown`);
  assert.equal(teardown.status, 202, teardown.text);
  assert.equal((await operationFinished(lw.owner, teardown.body.id)).state, 'succeeded');
  const early = await lw.sync();
  assert.equal(early.state, 'failed', 'within the grace period the unpinned image stays');
  assert.equal(early.error.reason, 'store-full');
  assert.deepEqual(await storedImages(), [small]);

  lw.server.clock.advance(IMAGE_GRACE_MS + 24 * 3_600_000); // past the grace of what the first Sync pulled and of its layers
  const synced = await lw.sync();
  assert.equal(synced.state, 'succeeded', JSON.stringify(synced.error));
  await until(async () => ((await page()) === '200 two\n' ? true : undefined), 'the new image to be served');
  assert.deepEqual(await storedImages(), [other]);
  assert.equal((await deployedRow()).images.web.digest, other);
});

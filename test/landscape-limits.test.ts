// svc.yml cannot stall the server: files are checked in worker threads with a time budget, errors are capped.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { stoppedWorkspace } from './helpers/workspaces.ts';
import { assertProblem, createPerson, type Answer, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

/** 67,826 services with an unknown key each and no steps: about 4 MB, two errors per service. */
const unknownKeyServices = 67_826;
const keysErrors = 2 * unknownKeyServices;
function manyUnknownKeys(): string {
  const lines = ['schema: svc/v1', 'services:'];
  for (let i = 0; i < unknownKeyServices; i++) {
    const n = String(i).padStart(8, '0');
    lines.push(`  svc-${n}:`, '    type: steps', `    unknown-${n}: 1`);
  }
  return `${lines.join('\n')}\n`;
}

/** 219,826 anchors and aliases under an x- key, and one valid service: about 3 MB that only the yaml package reads. */
function manyAnchors(): string {
  const lines = ['schema: svc/v1', 'x-values:'];
  for (let i = 0; i < 109_913; i++) lines.push(`  - &a${i} v${i}`, `  - *a${i}`);
  lines.push('services:', '  web:', '    type: steps', '    steps: [{run: x}]');
  return `${lines.join('\n')}\n`;
}

interface Installation {
  server: TestServer;
  dev: ApiClient;
  team: number;
  developer: number;
}

let roomy: Installation;
let strict: Installation;
const keysText = manyUnknownKeys();
const anchorsText = manyAnchors();

async function installation(env: Record<string, string>): Promise<Installation> {
  const server = await startTestServer({ env });
  const owner = await createPerson(server.admin, 'limits-owner@example.com');
  const org = (await owner.key.post('/orgs', { name: 'Limits' })).body.id;
  const team = (await owner.key.post('/teams', { org_id: org, name: 'Limits' })).body.id;
  const developer = await createPerson(server.admin, 'limits-dev@example.com');
  await owner.key.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
  return { server, dev: developer.key, team, developer: developer.id };
}

/** A workspace whose volume holds `text` as svc.yml. */
async function workspaceWith(at: Installation, name: string, text: string): Promise<number> {
  const { id, volume } = await stoppedWorkspace(at.server.server.database.pool, at.server.server.config.dataDir, { teamId: at.team, createdBy: at.developer, name });
  await writeFile(path.join(volume, 'svc.yml'), text);
  return id;
}

before(async () => {
  assert.ok(keysText.length > 3_500_000 && keysText.length <= 4 * 2 ** 20, `${keysText.length} bytes`);
  // A budget no file here comes near, and one that no 4 MB file fits in.
  roomy = await installation({ SVC_LANDSCAPE_CHECK_BUDGET: '600000' });
  strict = await installation({ SVC_LANDSCAPE_CHECK_BUDGET: '50' });
});
after(async () => {
  await roomy?.server.close();
  await strict?.server.close();
});

test('plans of 4 MB files are checked off the event loop: /api/v1/version keeps answering while they are pending', async (t) => {
  const keys = await workspaceWith(roomy, 'keys', keysText);
  const anchors = await workspaceWith(roomy, 'anchors', anchorsText);
  const answers: Array<{ name: string; answer: Answer; versionsBefore: number }> = [];
  let versions = 0;
  const plan = (name: string, ws: number) =>
    roomy.dev.get(`/workspaces/${ws}/landscape/plan`).then((answer) => answers.push({ name, answer, versionsBefore: versions }));
  const plans = Promise.all([plan('keys', keys), plan('anchors', anchors)]);
  // One version request after the other for as long as a plan is pending: each one answered counts.
  let slowestMs = 0;
  while (answers.length < 2) {
    const sent = performance.now();
    const version = await roomy.server.anonymous.get('/version');
    assert.equal(version.status, 200);
    slowestMs = Math.max(slowestMs, performance.now() - sent);
    if (answers.length < 2) versions++;
  }
  await plans;
  t.diagnostic(`version answers while the plans were pending: ${versions}; slowest ${slowestMs.toFixed(0)} ms`);
  for (const { name, versionsBefore } of answers) {
    // Checking either file takes seconds of CPU; blocking the event loop, not one version request would pass.
    assert.ok(versionsBefore >= 100, `only ${versionsBefore} version requests were answered before the ${name} plan`);
  }
  const byName = Object.fromEntries(answers.map((a) => [a.name, a.answer]));
  assert.equal(byName.anchors.status, 200, byName.anchors.text);
  assert.deepEqual(byName.anchors.body.services.map((s: { name: string }) => s.name), ['web']);
  assertProblem(byName.keys, 422, 'invalid-landscape');
});

test('a file with more errors than are listed: the first 100, and how many more there are', async () => {
  const ws = await workspaceWith(roomy, 'capped', keysText);
  const plan = await roomy.dev.get(`/workspaces/${ws}/landscape/plan`);
  assertProblem(plan, 422, 'invalid-landscape');
  assert.equal(plan.body.errors.length, 100);
  assert.equal(plan.body.omitted, keysErrors - 100);
  assert.equal(plan.body.detail, `svc.yml has ${keysErrors} errors; the first 100 are listed, ${keysErrors - 100} more are not.`);
  // By place: each service's missing steps (at its name), then its unknown key.
  const listed = plan.body.errors.map((e: { code: string; pointer: string; line: number }) => [e.code, e.pointer, e.line]);
  const expected = Array.from({ length: 50 }, (_, i) => {
    const n = String(i).padStart(8, '0');
    return [['required', `/services/svc-${n}/steps`, 3 + 3 * i], ['unknown-key', `/services/svc-${n}/unknown-${n}`, 5 + 3 * i]];
  }).flat();
  assert.deepEqual(listed, expected);
  const banner = (await roomy.dev.get(`/workspaces/${ws}/landscape`)).body.banner;
  assert.equal(banner.state, 'file-errors');
  assert.equal(banner.detail, `svc.yml has ${keysErrors} error(s); the first 100 are listed`);
  assert.equal(banner.errors.length, 100);
});

test('a file that takes longer than the budget to check is refused with 422 landscape-too-complex, never a 500', async () => {
  for (const [name, text] of [['too-many-keys', keysText], ['too-many-anchors', anchorsText]]) {
    const ws = await workspaceWith(strict, name, text);
    const plan = await strict.dev.get(`/workspaces/${ws}/landscape/plan`);
    assertProblem(plan, 422, 'landscape-too-complex');
    assert.equal(plan.body.budget_ms, 50);
    assert.match(plan.body.detail, /^svc\.yml is too complex to check: checking it took more than 0\.05 s/);
    const sync = await strict.dev.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: '0'.repeat(64) });
    assertProblem(sync, 422, 'landscape-too-complex');
    const banner = (await strict.dev.get(`/workspaces/${ws}/landscape`)).body.banner;
    assert.deepEqual(banner, { state: 'not-comparable', detail: plan.body.detail });
  }
});

test('a file over 4 MiB is not read: 413 landscape-too-large with the limit', async () => {
  const text = `schema: svc/v1\nx-padding: "${'x'.repeat(4 * 2 ** 20)}"\n`;
  const ws = await workspaceWith(roomy, 'huge', text);
  const plan = await roomy.dev.get(`/workspaces/${ws}/landscape/plan`);
  assertProblem(plan, 413, 'landscape-too-large');
  assert.equal(plan.body.limit_bytes, 4 * 2 ** 20);
  assert.equal(plan.body.detail, `svc.yml is larger than 4 MiB (${text.length} bytes); svc reads landscape files up to 4194304 bytes`);
  const banner = (await roomy.dev.get(`/workspaces/${ws}/landscape`)).body.banner;
  assert.deepEqual(banner, { state: 'not-comparable', detail: plan.body.detail });
});

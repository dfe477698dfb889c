// One member's heavy files delay only their own plans (issue 33, item 7): the checker serves callers in turn,
// keeps a worker for other teams, and refuses a caller's checks beyond its share with 429 and Retry-After.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type Answer, type ApiClient } from './helpers/client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { until } from './helpers/wait.ts';
import { stoppedWorkspace } from './helpers/workspaces.ts';

/** A valid profile the yaml package needs a good fraction of a second to read: anchors and aliases under an x- key. */
function heavyProfile(): string {
  const lines = ['schema: svc/v1', 'x-values:'];
  for (let i = 0; i < 800; i++) lines.push(`  - &a${i} {level: [{of: [{nesting: v${i}}]}]}`, `  - *a${i}`);
  lines.push('services:', '  web:', '    type: steps', '    steps: [{run: x}]');
  return `${lines.join('\n')}\n`;
}
const smallFile = 'schema: svc/v1\nservices:\n  api:\n    type: steps\n    steps: [{run: x}]\n';

let server: TestServer;

/** A member of a team of its own, and a stopped workspace whose volume holds `files`. */
async function memberWith(name: string, files: Record<string, string>): Promise<{ client: ApiClient; ws: number }> {
  const person = await createPerson(server.admin, `${name}@example.com`);
  const org = (await person.key.post('/orgs', { name })).body.id;
  const team = (await person.key.post('/teams', { org_id: org, name })).body.id;
  const { id, volume } = await stoppedWorkspace(server.server.database.pool, server.server.config.dataDir, { teamId: team, createdBy: person.id, name });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(volume, file), text);
  return { client: person.key, ws: id };
}

before(async () => {
  // A budget none of these files comes near: every accepted plan is answered 200.
  server = await startTestServer({ env: { SVC_LANDSCAPE_CHECK_BUDGET: '600000' } });
});
after(async () => {
  await server?.close();
});

test("another team's plan is answered while one member has 16 heavy plans pending; beyond the member's share they get 429 with Retry-After", async (t) => {
  const heavy = await memberWith('heavy', { 'svc.heavy.yml': heavyProfile() });
  const light = await memberWith('light', { 'svc.yml': smallFile });
  const finished: string[] = [];
  const refused: Answer[] = [];
  const heavyPlans = Array.from({ length: 16 }, (_, i) =>
    heavy.client.get(`/workspaces/${heavy.ws}/landscape/plan?profile=heavy`).then((answer) => {
      if (answer.status === 429) refused.push(answer);
      else finished.push(`heavy ${i}`);
      return answer;
    }),
  );
  // A member holds 8 checks (running and waiting); the other 8 are refused at once, before any heavy plan is done.
  await until(async () => refused.length === 8 || undefined, 'the plans beyond the member\'s share to be refused');
  for (const answer of refused) {
    assertProblem(answer, 429, 'rate-limited');
    assert.equal(answer.headers.get('retry-after'), '600');
    assert.match(answer.body.detail, /^You have too many landscape files being checked now; wait 600 s\.$/);
  }
  const small = await light.client.get(`/workspaces/${light.ws}/landscape/plan`);
  finished.push('small');
  assert.equal(small.status, 200, small.text);
  assert.deepEqual(small.body.services.map((s: { name: string }) => s.name), ['api']);
  const answers = await Promise.all(heavyPlans);
  const accepted = answers.filter((a) => a.status !== 429);
  assert.equal(accepted.length, 8);
  for (const answer of accepted) assert.equal(answer.status, 200, answer.text);
  // The member's checks run one at a time on one worker; the other team's took the other: at most the one heavy
  // check already running (and the next, should the other worker still have been loading) finished first.
  const heavyFirst = finished.indexOf('small');
  t.diagnostic(`answered in this order: ${finished.join(', ')}`);
  assert.ok(heavyFirst <= 2, `${heavyFirst} heavy plans were answered before the small one: ${finished.join(', ')}`);
  // Once its checks are done the member plans again.
  const again = await heavy.client.get(`/workspaces/${heavy.ws}/landscape/plan?profile=heavy`);
  assert.equal(again.status, 200, again.text);
});

// The landscape-check workers load the TypeScript sources however the server was started: `svc server`
// (bin/svc.js, tsx registered in-process) and `tsx src/cli/main.ts server` (`npm run up`, tsx's own command).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { stoppedWorkspace } from './helpers/workspaces.ts';
import { ApiClient, assertProblem, createPerson } from './helpers/client.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startSvc, stopSvc, watchSvc, type SvcProcess } from './helpers/process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const databases: TestDatabase[] = [];
let scratch: string;
before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-check-entry-'));
});
after(async () => {
  for (const database of databases) await database.drop();
  await rm(scratch, { recursive: true, force: true });
});

/** `tsx src/cli/main.ts ...` as `npm run up` runs it, from another directory, with the output `startSvc` reads. */
function startWithTsx(args: string[], env: Record<string, string>): SvcProcess {
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const child = spawn(tsx, [path.join(root, 'src/cli/main.ts'), ...args], { cwd: scratch, env: { ...process.env, ...env } });
  return watchSvc(child);
}

for (const [entry, start] of [
  ['bin/svc.js', (args: string[], env: Record<string, string>) => startSvc(args, env)],
  ['tsx src/cli/main.ts', startWithTsx],
] as const) {
  test(`started as ${entry}, the server plans a landscape file in its workers`, async () => {
    // Each server its own installation: the first start of one prints the sign-in link used below.
    const database = await createTestDatabase();
    databases.push(database);
    const dataDir = path.join(scratch, entry.replace(/\W+/g, '-'));
    const server = start(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--data-plane', 'node'], { DATABASE_URL: database.url });
    try {
      const [, url] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)\n/);
      const [, link] = await server.waitFor(/^\s+(http\S+\/sign-in#token=\S+)$/m);
      const admin = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey();
      const person = await createPerson(admin, `${entry.replace(/\W+/g, '-')}@example.com`);
      const org = (await admin.post('/orgs', { name: `Entry ${entry}` })).body.id;
      const team = (await admin.post('/teams', { org_id: org, name: 'Entry' })).body.id;
      await admin.put(`/teams/${team}/members/${person.id}`, { role: 'developer' });
      const pool = new pg.Pool({ connectionString: database.url });
      const { id, volume } = await stoppedWorkspace(pool, dataDir, { teamId: team, createdBy: person.id, name: 'entry' }).finally(() => pool.end());
      await writeFile(path.join(volume, 'svc.yml'), 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{run: npm start}]\n');
      const plan = await person.key.get(`/workspaces/${id}/landscape/plan`);
      assert.equal(plan.status, 200, `${plan.text}\n${server.stderr()}`);
      assert.deepEqual(plan.body.services.map((s: { name: string; action: string }) => [s.name, s.action]), [['web', 'create']]);
      await writeFile(path.join(volume, 'svc.yml'), 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    stepz: []\n');
      assertProblem(await person.key.get(`/workspaces/${id}/landscape/plan`), 422, 'invalid-landscape');
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.stderr());
    } finally {
      await stopSvc(server);
    }
  });
}

// bench/lists: GET /api/v1/workspaces?limit=50 by a developer of a team with 1,000 workspaces, 32 connections (wrk),
// through the installation's data plane as a client sees it. Its reference is the target itself (no list endpoint
// of another product runs here): ≥ 1,000 requests per second with p99 ≤ 50 ms. The page costs one indexed statement
// while the server holds its items, a second by primary key for the rows it does not (docs/api.md, "Lists at scale").
import pg from 'pg';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { createPerson } from '../test/helpers/client.ts';
import { medianOf, startBenchServer, wrk, type Measurement } from './http-load.ts';
import { recordResult } from './summary.ts';

const WORKSPACES = 1000;
const TARGET_RPS = 1000;
const TARGET_P99_MS = 50;
const CHANGES_PER_SECOND = 200;

/** Runs `load` while another connection changes one of `ids` every 1/CHANGES_PER_SECOND s (its status text). */
async function withChangingPage<T>(databaseUrl: string, ids: number[], load: () => Promise<T>): Promise<{ result: T; changes: number }> {
  const writer = new pg.Client({ connectionString: databaseUrl });
  await writer.connect();
  let changes = 0;
  let running = true;
  const changing = (async () => {
    const start = Date.now();
    while (running) {
      await writer.query('UPDATE workspaces SET status_detail = $2, updated_at = now(), version = version + 1 WHERE id = $1', [ids[changes % ids.length], `Stopped ${changes}`]);
      changes++;
      const due = start + (changes * 1000) / CHANGES_PER_SECOND;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    }
  })();
  try {
    return { result: await load(), changes };
  } finally {
    running = false;
    await changing;
    await writer.end();
  }
}

export async function benchLists(seconds = Number(process.env.BENCH_SECONDS) || 3): Promise<void> {
  const server = await startBenchServer();
  try {
    const org = (await server.admin.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await server.admin.post('/teams', { org_id: org, name: 'Bench' })).body.id as number;
    const developer = await createPerson(server.admin, 'lists@example.com');
    await server.admin.put(`/teams/${team}/members/${developer.id}`, { role: 'developer' });
    const pool = new pg.Pool({ connectionString: server.databaseUrl, max: 4 });
    try {
      for (let i = 0; i < WORKSPACES; i++) {
        await insertWorkspace(pool, {
          teamId: team, name: `ws-${i}`, plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
          idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', createdBy: developer.id, at: new Date(),
        });
      }
      await pool.query('ANALYZE workspaces');
    } finally {
      await pool.end();
    }
    const url = `${server.url}/api/v1/workspaces?limit=50`;
    const headers = { authorization: `Bearer ${developer.key.auth.token}` };
    const page = await developer.key.get('/workspaces?limit=50');
    if (page.status !== 200 || page.body.items.length !== 50) throw new Error(`the page is not 50 workspaces: ${page.status} ${page.text.slice(0, 200)}`);
    await wrk(url, headers, 1); // warm-up
    const runs: Measurement[] = [];
    for (let round = 0; round < 3; round++) runs.push(await wrk(url, headers, seconds));
    const { rps, p99ms } = medianOf(runs);
    console.log(`bench/lists: GET /api/v1/workspaces?limit=50 of ${WORKSPACES} in the team, wrk -t1 -c32, 3 rounds of ${seconds}s, medians`);
    console.log(`  ${rps.toFixed(0)} req/s (${(rps / TARGET_RPS).toFixed(2)}x the target ${TARGET_RPS})   p99 ${p99ms.toFixed(1)} ms (target ≤ ${TARGET_P99_MS} ms)`);
    // The server keeps the items by row version (src/workspaces/list-page.ts): the same load while the page's
    // workspaces change, so that the rows it must read again show in the numbers too.
    const churn = await withChangingPage(server.databaseUrl, page.body.items.map((w: { id: number }) => w.id), () => wrk(url, headers, seconds));
    console.log(`  while ${CHANGES_PER_SECOND} of the page's workspaces change a second: ${churn.result.rps.toFixed(0)} req/s   p99 ${churn.result.p99ms.toFixed(1)} ms   (${churn.changes} changes made)`);
    recordResult('workspace-list', { measured: `${rps.toFixed(0)} req/s (${(rps / TARGET_RPS).toFixed(2)}× target), p99 ${p99ms.toFixed(1)} ms`, met: rps >= TARGET_RPS && p99ms <= TARGET_P99_MS });
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLists();

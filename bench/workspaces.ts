// bench/workspaces: the time from POST /workspaces to Running for an empty workspace on the local driver
// (volume, pod with its own network, agent, editor), median of several, with the pod start alone as reference.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { ApiClient } from '../test/helpers/client.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { startSvc } from '../test/helpers/process.ts';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function finish(key: ApiClient, operationId: string): Promise<void> {
  for (;;) {
    const operation = (await key.get(`/operations/${operationId}`)).body;
    if (operation.state === 'failed') throw new Error(JSON.stringify(operation.error));
    if (operation.state === 'succeeded') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function benchWorkspaces(runs = Number(process.env.BENCH_RUNS) || 5): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-ws-'));
  const database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
  const svc = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--log-level', 'warn'], { DATABASE_URL: database?.url });
  const ids: number[] = [];
  try {
    const [, url] = await svc.waitFor(/listening on (\S+)\n/, 120_000);
    const [, link] = await svc.waitFor(/^\s+(http\S+#token=\S+)$/m);
    const key = await (await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length))).mintKey('bench');
    const org = (await key.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await key.post('/teams', { org_id: org, name: 'Bench' })).body.id;
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const created = await key.post('/workspaces', { team_id: team, name: `bench-${i}`, storage_gib: 1 });
      ids.push(Number(created.body.target.split('/')[2]));
      await finish(key, created.body.id);
      times.push(performance.now() - started);
    }
    const wakeTimes: number[] = [];
    for (const id of ids) {
      await key.post(`/workspaces/${id}/sleep`);
      const started = performance.now();
      await finish(key, (await key.post(`/workspaces/${id}/wake`)).body.id);
      wakeTimes.push(performance.now() - started);
    }
    console.log(`bench/workspaces: empty workspace, create to Running: median ${median(times).toFixed(0)} ms over ${runs}` +
      ` (wake of the same workspaces, pod and editor only: ${median(wakeTimes).toFixed(0)} ms; ratio ${(median(times) / median(wakeTimes)).toFixed(2)}x)`);
  } finally {
    const driver = createLocalDriver({ dataDir });
    for (const id of ids) {
      await driver.stopWorkspace({ id, uid: 0, storageGib: 1 });
      await driver.deleteVolume({ id, uid: 0, storageGib: 1 });
    }
    svc.child.kill('SIGTERM');
    await svc.exited;
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWorkspaces();

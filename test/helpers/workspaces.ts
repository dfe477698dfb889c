// Pods outlive their server by design: a test stops the workspaces it made and removes their volumes.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Queryable } from '../../src/store/database.ts';
import { insertWorkspace } from '../../src/store/workspaces.ts';
import { ensureVolumeLayout, volumeAppDir } from '../../src/runtime/local/volume-layout.ts';
import type { RuntimeDriver } from '../../src/runtime/driver.ts';
import { createPerson, type ApiClient } from './client.ts';
import { createBareRepository, type BareRepository } from './git.ts';
import { rawRequest } from './raw-http.ts';
import type { TestServer } from './server.ts';
import { operationFinished, until } from './wait.ts';

/**
 * A stopped workspace made in the store with an empty volume directory, for tests of what reads its files (Plan,
 * the banner) without a pod: its id and the volume's path on the host.
 */
export async function stoppedWorkspace(db: Queryable, dataDir: string, of: { teamId: number; createdBy: number; name: string }): Promise<{ id: number; volume: string }> {
  const { id } = await insertWorkspace(db, {
    ...of, plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
    idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', at: new Date(),
  });
  const volume = path.join(dataDir, 'volumes', String(id));
  await mkdir(volume, { recursive: true });
  await ensureVolumeLayout(volume, { uid: 0, asRoot: false });
  return { id, volume: volumeAppDir(volume) };
}

export async function removeWorkspaces(driver: RuntimeDriver, ids: Array<number | undefined>): Promise<void> {
  for (const id of ids) {
    if (!id) continue;
    await driver.stopWorkspace({ id, uid: 0, storageGib: 0 });
    await driver.deleteVolume({ id, uid: 0, storageGib: 0 });
  }
}

/** One service, `web`, answering `web saw <path>` on the dev URL's `/`. */
export const WEB_FILES = {
  'svc.yml': `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node web.js
    ports:
      - port: 8080
        routes: [{ path: / }]
    health: { port: 8080 }
`,
  'web.js': `require('node:http').createServer((req, res) => res.end('web saw ' + req.url)).listen(8080, '0.0.0.0');\n`,
};

export interface ServedWorkspace {
  id: number;
  /** The owner, and its API key for Svc-Authorization. */
  owner: ApiClient;
  key: string;
  repository: BareRepository;
}

/**
 * A running workspace of a new owner, cloned from `files`, synced, its dev URL served; with nginx in front, nginx
 * serves it directly (the server needs SVC_ALLOW_LOCAL_REPOSITORIES). Remove it with removeWorkspaces.
 */
export async function servedWorkspace(server: TestServer, name: string, files: Record<string, string> = WEB_FILES): Promise<ServedWorkspace> {
  const person = await createPerson(server.admin, `${name}-owner@example.com`);
  const owner = person.key;
  const org = (await owner.post('/orgs', { name })).body.id;
  const team = (await owner.post('/teams', { org_id: org, name })).body.id;
  const repository = await createBareRepository(files);
  const created = await owner.post('/workspaces', { team_id: team, name, git: { provider: 'git', repo: repository.url } });
  assert.equal(created.status, 202, created.text);
  const id = Number(created.body.target.split('/')[2]);
  const setUp = await operationFinished(owner, created.body.id);
  assert.equal(setUp.state, 'succeeded', JSON.stringify(setUp));
  const plan = (await owner.get(`/workspaces/${id}/landscape/plan`)).body;
  const sync = await owner.post(`/workspaces/${id}/landscape/sync`, { plan_hash: plan.hash });
  const synced = await operationFinished(owner, sync.body.id);
  assert.equal(synced.state, 'succeeded', JSON.stringify(synced));
  await until(async () => ((await owner.get(`/workspaces/${id}/landscape`)).body.dev_url.state === 'served' ? true : undefined), 'the dev URL to be served');
  const key = owner.auth.token!;
  const nginx = server.server.dataPlane;
  if (nginx) {
    // The first request loads the workspace's routing; nginx's map follows it.
    await rawRequest(Number(new URL(server.url).port), `GET / HTTP/1.1\r\nHost: w${id}.${server.server.config.workspaceDomain}\r\nSvc-Authorization: Bearer ${key}\r\nConnection: close`);
    await until(async () => (nginx.servesDirectly(id) ? true : undefined), 'nginx to serve the workspace itself');
  }
  return { id, owner, key, repository };
}

// A server with the local driver (quick restarts, the give-up window of 2 minutes kept) and one running workspace of
// a new owner in a team of its own, cloned from files given by the test: what the landscape tests of container and
// image services share, with their reads (a service, its log lines) and waits (a status, a Sync).
import assert from 'node:assert/strict';
import path from 'node:path';
import type { RuntimeDriver } from '../../src/runtime/driver.ts';
import type { ImageSource } from '../../src/runtime/image.ts';
import { createLocalDriver } from '../../src/runtime/local/index.ts';
import { createPerson, type ApiClient } from './client.ts';
import { createBareRepository, type BareRepository } from './git.ts';
import { startTestServer, type TestServer } from './server.ts';
import { operationFinished, until } from './wait.ts';
import { removeWorkspaces } from './workspaces.ts';

export interface LandscapeWorkspaceOptions {
  /** The team's and organization's name; the owner is `<name as a slug>@example.com`. */
  team: string;
  workspace: string;
  /** The repository the workspace is cloned from (svc.yml and what its services run). */
  files: Record<string, string>;
  /** More of the workspace's creation (`base_image`). */
  create?: Record<string, unknown>;
  env?: Record<string, string>;
  imageSource?: ImageSource | false;
}

export interface LandscapeWorkspace {
  server: TestServer;
  driver: RuntimeDriver;
  owner: ApiClient;
  ownerId: number;
  team: number;
  ws: number;
  repository: BareRepository;
  /** The service as GET /workspaces/{ws}/landscape shows it. */
  serviceOf(name: string): Promise<any>;
  /** The texts of a service's log lines of one stream. */
  linesOf(service: string, stream: 'stdout' | 'stderr' | 'system'): Promise<string[]>;
  /** The service once it has `status`. */
  reaches(name: string, status: string): Promise<any>;
  /** Plan (of `profile`), then Sync with its hash: the finished operation. */
  sync(profile?: string): Promise<any>;
  /** A file of the workspace's volume, as the host sees it. */
  volumeFile(name: string): string;
  /** Stops the workspace and `more` (ids of other workspaces the test made), the server, the repository. */
  close(more?: Array<number | undefined>): Promise<void>;
}

export async function startLandscapeWorkspace(options: LandscapeWorkspaceOptions): Promise<LandscapeWorkspace> {
  let driver: RuntimeDriver | undefined;
  const server = await startTestServer({
    env: { SVC_ALLOW_LOCAL_REPOSITORIES: 'true', ...options.env },
    // restarts after 10 ms instead of 1 s; the give-up window stays 2 minutes
    driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock, replicaTimings: { backoffBaseMs: 10, backoffMaxMs: 40, probeIntervalMs: 100 } })),
    imageSource: options.imageSource,
  });
  const person = await createPerson(server.admin, `${options.team.toLowerCase().replace(/[^a-z0-9]+/g, '-')}@example.com`);
  const owner = person.key;
  const org = (await owner.post('/orgs', { name: options.team })).body.id;
  const team = (await owner.post('/teams', { org_id: org, name: options.team })).body.id;
  const repository = await createBareRepository(options.files);
  const created = await owner.post('/workspaces', { team_id: team, name: options.workspace, storage_gib: 1, git: { provider: 'git', repo: repository.url }, ...options.create });
  assert.equal(created.status, 202, created.text);
  const ws = Number(created.body.target.split('/')[2]);
  const started = await operationFinished(owner, created.body.id);
  assert.equal(started.state, 'succeeded', JSON.stringify(started.error));

  const serviceOf = async (name: string) => (await owner.get(`/workspaces/${ws}/landscape`)).body.services.find((s: { name: string }) => s.name === name);
  return {
    server,
    driver: driver!,
    owner,
    ownerId: person.id,
    team,
    ws,
    repository,
    serviceOf,
    linesOf: async (service, stream) =>
      (await owner.get(`/workspaces/${ws}/landscape/services/${service}/logs`)).body.lines.filter((l: { stream: string }) => l.stream === stream).map((l: { text: string }) => l.text),
    reaches: (name, status) =>
      until(async () => {
        const service = await serviceOf(name);
        return service?.status === status ? service : undefined;
      }, `${name} to be ${status}`),
    async sync(profile) {
      const query = profile ? `?profile=${profile}` : '';
      const plan = await owner.get(`/workspaces/${ws}/landscape/plan${query}`);
      assert.equal(plan.status, 200, plan.text);
      const sync = await owner.post(`/workspaces/${ws}/landscape/sync`, { plan_hash: plan.body.hash, ...(profile ? { profile } : {}) });
      assert.equal(sync.status, 202, sync.text);
      return operationFinished(owner, sync.body.id);
    },
    volumeFile: (name) => path.join(server.server.config.dataDir, 'volumes', String(ws), 'app', name),
    async close(more = []) {
      await removeWorkspaces(driver!, [ws, ...more]);
      await server.close();
      await repository.remove();
    },
  };
}

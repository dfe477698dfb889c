// A real server on a free port against its own database, driven over HTTP.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/core/clock.ts';
import { loadServerConfig } from '../../src/core/config.ts';
import type { RuntimeDriver } from '../../src/runtime/driver.ts';
import type { ImageSource } from '../../src/runtime/image.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createTestDatabase } from './database.ts';
import { ApiClient } from './client.ts';

/**
 * Tests make volumes as plain directories (quick, and a test's data directory is removed with rm) unless the run
 * sets SVC_VOLUME_BACKEND (e.g. loop) or the test does; test/volume-size.test.ts tests the loop backend.
 */
export const TEST_VOLUME_BACKEND = process.env.SVC_VOLUME_BACKEND ?? 'directory';

export interface TestServer {
  url: string;
  clock: ManualClock;
  server: RunningServer;
  /** The first administrator with an API key (unaffected by moving the clock, unlike sessions). */
  admin: ApiClient;
  /** The first administrator with a browser session. */
  adminSession: ApiClient;
  anonymous: ApiClient;
  close(): Promise<void>;
}

export interface TestServerOptions {
  rateLimit?: number;
  env?: Record<string, string>;
  /** Makes the runtime driver (e.g. the local one with short timings); the local driver on the data dir when absent. */
  driver?: (context: { dataDir: string; clock: ManualClock }) => RuntimeDriver;
  /**
   * Where container services' images come from (test/helpers/images.ts); by default, as in the installation, the image
   * store in the data directory pulling from registries (list a loopback registry in SVC_INSECURE_REGISTRIES); false: none.
   */
  imageSource?: ImageSource | false;
  /** Receives the server's log messages (info and above) instead of nothing, for tests that check what it logs. */
  onLog?: (message: string) => void;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database = await createTestDatabase();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-test-'));
  const clock = new ManualClock(new Date());
  const config = loadServerConfig(
    ['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--rate-limit', String(options.rateLimit ?? 0)],
    // The built-in editor (quick to start) unless a test passes SVC_TOOLS_DIR: an empty tools directory.
    // nginx is the data plane unless SVC_DATA_PLANE says node (test/router-node.test.ts).
    { DATABASE_URL: database.url, SVC_TOOLS_DIR: path.join(dataDir, 'no-tools'), SVC_DATA_PLANE: process.env.SVC_DATA_PLANE, SVC_VOLUME_BACKEND: TEST_VOLUME_BACKEND, SVC_FIRST_TEAM: 'false', ...options.env },
  );
  // SVC_TEST_LOG=debug shows the server's log while a test runs.
  const logLevel = process.env.SVC_TEST_LOG;
  const driver = options.driver?.({ dataDir, clock });
  const onLog = options.onLog;
  // pino calls the hook with the arguments of each log call at or above the level; not passing them on writes nothing.
  const capture = onLog ? { hooks: { logMethod: (args: unknown[]) => onLog(args.filter((a) => typeof a === 'string').join(' ')) } } : undefined;
  const logger = logLevel ? {} : (capture ?? false);
  const server = await startServer({ ...config, logLevel: logLevel ?? (capture ? 'info' : 'silent') }, { clock, logger, driver, imageSource: options.imageSource });
  await server.database.pool.query(`ALTER TABLE workspaces ALTER COLUMN id RESTART WITH ${database.firstWorkspaceId}`);
  const anonymous = new ApiClient(server.url);
  const token = new URL(server.firstSignInLink!).hash.replace('#token=', '');
  const adminSession = await anonymous.signInWithLink(token);
  const admin = await adminSession.mintKey('test administrator');
  return {
    url: server.url,
    clock,
    server,
    admin,
    adminSession,
    anonymous,
    async close() {
      await server.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

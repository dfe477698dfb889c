// Each test file gets its own database on the server of DATABASE_URL (set by scripts/run-tests.ts).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export function adminDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the tests with "npm test", which provides one');
  return url;
}

export interface TestDatabase {
  url: string;
  /**
   * Where this database's workspace ids start. Pods are named and addressed by workspace id on the one machine,
   * so files running at the same time must not share ids: each database takes its own block of 100 from a
   * sequence on the shared server.
   */
  firstWorkspaceId: number;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = adminDatabaseUrl();
  const name = `svc_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.query('CREATE SEQUENCE IF NOT EXISTS svc_test_workspace_blocks').catch(() => undefined); // a racing file made it
  const block = Number((await client.query<{ n: string }>("SELECT nextval('svc_test_workspace_blocks') AS n")).rows[0].n);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    firstWorkspaceId: 100 + (block % 140) * 100, // below 15265: runtime-local.test.ts uses 900001+ (block 15265 of the pod range)
    async drop() {
      const dropper = new pg.Client({ connectionString: admin });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
    },
  };
}

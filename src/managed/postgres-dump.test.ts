// Dumps of real managed PostgreSQL instances with the client tools of scripts/setup-pg-client.sh: for 15, 16 and 17,
// a row written, dumped (pg_dump custom format), restored into a fresh instance of the same major (the row, its
// index and its sequence come back), a second restore replacing what was written since; a restore of 16's dump into
// 17; a dump of a stopped instance failing with pg_dump's reason; one that cannot be loaded leaving the data as it
// was; the preamble filter on its own. Needs root and the
// tools of scripts/setup-postgres.sh and scripts/setup-pg-client.sh.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { freeLoopbackPort } from '../core/loopback.ts';
import { DEFAULT_TOOLS_DIR } from '../runtime/local/editor-tools.ts';
import { ManagedInstanceFailure, type ManagedHost } from './engine.ts';
import { findPgClientTools } from './pg-client.ts';
import { PreambleFilter, dumpPostgresInstance, restorePostgresInstance } from './postgres-dump.ts';
import { createPostgresInstance, deletePostgresInstance, installedPostgresMajors, stopPostgresInstance } from './postgres-instance.ts';
import { instanceDsn, type PostgresInstanceSpec } from './postgres-rules.ts';

const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const majors = await installedPostgresMajors(toolsDir);
const skip =
  process.getuid?.() !== 0
    ? 'needs root: instances run as an unprivileged UID'
    : ![15, 16, 17].every((major) => majors.includes(major))
      ? `PostgreSQL 15, 16 and 17 are not all installed in ${toolsDir}; run scripts/setup-postgres.sh`
      : !(await findPgClientTools(toolsDir))
        ? `the PostgreSQL client tools are not installed in ${toolsDir}; run scripts/setup-pg-client.sh`
        : false;

let host: ManagedHost;
let nextId = 20;

before(async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-managed-dump-'));
  await chmod(dataDir, 0o755);
  host = { dataDir, toolsDir, log: () => undefined };
});

after(async () => {
  await rm(host.dataDir, { recursive: true, force: true });
});

async function instance(major: number): Promise<PostgresInstanceSpec> {
  const id = nextId++;
  const spec = { id, major, database: 'app', user: 'app', password: 'dump test password', uid: 61000 + id, address: '127.0.0.1', port: await freeLoopbackPort() };
  await createPostgresInstance(host, spec);
  return spec;
}

async function query(spec: PostgresInstanceSpec, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: instanceDsn(spec) });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

const notes = async (spec: PostgresInstanceSpec) => (await query(spec, 'SELECT id, body FROM notes ORDER BY id')).rows;

for (const major of [15, 16, 17]) {
  test(`PostgreSQL ${major}: a dump restored into a fresh instance has the row; a second restore replaces what came since`, { skip }, async () => {
    const [source, target] = await Promise.all([instance(major), instance(major)]);
    try {
      await query(source, "CREATE TABLE notes (id serial PRIMARY KEY, body text UNIQUE); INSERT INTO notes (body) VALUES ('kept'), ('ünïcode ✓')");
      const file = path.join(host.dataDir, `${major}.dump`);
      await dumpPostgresInstance(host, source, file);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.equal((await readFile(file)).subarray(0, 5).toString(), 'PGDMP', 'pg_dump custom format');

      await restorePostgresInstance(host, target, file);
      assert.deepEqual(await notes(target), [{ id: 1, body: 'kept' }, { id: 2, body: 'ünïcode ✓' }]);
      assert.deepEqual((await query(target, "INSERT INTO notes (body) VALUES ('after') RETURNING id")).rows, [{ id: 3 }], 'the sequence came along');
      await assert.rejects(query(target, "INSERT INTO notes (body) VALUES ('kept')"), /duplicate key/, 'the unique index came along');
      const owner = await query(target, "SELECT tableowner FROM pg_tables WHERE tablename = 'notes'");
      assert.deepEqual(owner.rows, [{ tableowner: 'app' }]);

      await restorePostgresInstance(host, target, file);
      assert.deepEqual(await notes(target), [{ id: 1, body: 'kept' }, { id: 2, body: 'ünïcode ✓' }], 'the restore replaced the database');
    } finally {
      await Promise.all([deletePostgresInstance(host, source.id), deletePostgresInstance(host, target.id)]);
    }
  });
}

test('a dump of PostgreSQL 16 restores into 17; a stopped instance cannot be dumped and says why', { skip }, async () => {
  const [source, target] = await Promise.all([instance(16), instance(17)]);
  try {
    await query(source, "CREATE TABLE notes (id serial PRIMARY KEY, body text); INSERT INTO notes (body) VALUES ('from 16')");
    const file = path.join(host.dataDir, 'upgrade.dump');
    await dumpPostgresInstance(host, source, file);
    await restorePostgresInstance(host, target, file);
    assert.deepEqual(await notes(target), [{ id: 1, body: 'from 16' }]);

    await stopPostgresInstance(host, source.id);
    await assert.rejects(dumpPostgresInstance(host, source, path.join(host.dataDir, 'stopped.dump')), (error: Error) => {
      assert.ok(error instanceof ManagedInstanceFailure);
      assert.match(error.message, /^pg_dump of PostgreSQL instance \d+ failed: .*connection to server at "127\.0\.0\.1", port \d+ failed: Connection refused/);
      return true;
    });
    await assert.rejects(restorePostgresInstance(host, target, path.join(host.dataDir, 'missing.dump')), /^Error: reading the dump failed: .*missing\.dump/);
    assert.deepEqual(await notes(target), [{ id: 1, body: 'from 16' }], 'a dump that cannot be read leaves the database as it was');
  } finally {
    await Promise.all([deletePostgresInstance(host, source.id), deletePostgresInstance(host, target.id)]);
  }
});

test('a dump that cannot be loaded (17 syntax into 15) fails with psql\'s reason and leaves the data as it was', { skip }, async () => {
  const [source, target] = await Promise.all([instance(17), instance(15)]);
  try {
    await query(source, `CREATE TABLE notes (id serial PRIMARY KEY, body text); INSERT INTO notes (body) VALUES ('from 17');
      CREATE VIEW bodies AS SELECT * FROM JSON_TABLE('[{"b": "x"}]'::jsonb, '$[*]' COLUMNS (b text PATH '$.b')) AS t`);
    await query(target, "CREATE TABLE notes (id serial PRIMARY KEY, body text); INSERT INTO notes (body) VALUES ('before')");
    const file = path.join(host.dataDir, 'newer.dump');
    await dumpPostgresInstance(host, source, file);
    await assert.rejects(restorePostgresInstance(host, target, file), (error: Error) => {
      assert.ok(error instanceof ManagedInstanceFailure);
      assert.match(error.message, /^loading the dump into PostgreSQL instance \d+ failed: .*syntax error/);
      return true;
    });
    assert.deepEqual(await notes(target), [{ id: 1, body: 'before' }]);
    const left = await query(target, "SELECT datname FROM pg_database WHERE datname = 'svc_restore'");
    assert.equal(left.rowCount, 0, 'the half-loaded database is gone');
  } finally {
    await Promise.all([deletePostgresInstance(host, source.id), deletePostgresInstance(host, target.id)]);
  }
});

test('the preamble filter drops SET transaction_timeout only before the first statement, in any chunking', async () => {
  const sql = [
    '--',
    '-- PostgreSQL database dump',
    '\\restrict AbC123',
    'SET statement_timeout = 0;',
    'SET transaction_timeout = 0;',
    "SELECT pg_catalog.set_config('search_path', '', false);",
    '',
    'CREATE TABLE public.notes (body text);',
    'COPY public.notes (body) FROM stdin;',
    'SET transaction_timeout = 0;',
    'ünïcode ✓',
    '\\.',
    '',
  ].join('\n');
  const expected = sql.replace('SET transaction_timeout = 0;\n', '');
  const bytes = Buffer.from(sql);
  for (const size of [1, 2, 3, 7, bytes.length]) {
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
    const out: Buffer[] = [];
    for await (const chunk of Readable.from(chunks).pipe(new PreambleFilter())) out.push(chunk as Buffer);
    assert.equal(Buffer.concat(out).toString('utf8'), expected, `chunks of ${size} bytes`);
  }
});

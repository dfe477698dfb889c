// GET /workspaces keeps each workspace's item by row version (src/workspaces/list-page.ts): on a real PostgreSQL, a
// page from kept items is the same bytes as the page read whole, for every caller; a change of a row by any
// statement (also one that leaves `version` alone), of its vault or of the caller's role shows on the next page; a
// row changed or purged between the page's two reads makes it read whole, in one snapshot; the kept items stay
// within their capacity.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { teamPermissions } from '../src/auth/permissions.ts';
import '../src/store/database.ts';
import { migrate } from '../src/store/migrate.ts';
import { upsertTeamMember } from '../src/store/teams.ts';
import { COL, readWorkspacePage, type PageFilter } from '../src/store/workspace-pages.ts';
import { insertWorkspace } from '../src/store/workspaces.ts';
import { readListPage, WorkspaceItems, type ListPage } from '../src/workspaces/list-page.ts';
import { addressJson, pageItemJson } from '../src/workspaces/view-json.ts';
import { workspaceUrlsFromBase } from '../src/workspaces/view.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { insertListCallers, type ListCallers } from './helpers/list-callers.ts';

let database: TestDatabase;
let pool: pg.Pool;
let ids: ListCallers;
const addresses = addressJson(workspaceUrlsFromBase('http://localhost:8080', 'localhost'));

before(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 3 });
  await migrate(pool);
  const at = new Date();
  ids = await insertListCallers(pool, at);
  // Interleaved ids, so that a member of both teams gets a page merged from two ranges.
  for (let i = 0; i < 30; i++) {
    await insertWorkspace(pool, {
      teamId: i % 3 === 0 ? ids.other : ids.team, name: `ws-${i}`, plan: 'standard', baseImage: 'debian', git: null, storageGib: 1, restricted: false,
      idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', createdBy: ids.developer, at,
    });
  }
  await pool.query(`UPDATE workspaces SET deleted_at = now(), purge_after = now() + interval '7 days' WHERE name IN ('ws-4', 'ws-9')`);
});

after(async () => {
  await pool.end();
  await database.drop();
});

const permissionsJson = (isAdmin: boolean) => (teamRole: string | null, orgRole: string | null) => {
  const all = teamPermissions({ isAdmin, teamRole: (teamRole ?? undefined) as never, orgRole: (orgRole ?? undefined) as never });
  return all.length === 0 ? undefined : JSON.stringify(all.filter((p) => /^(workspace|landscape|variables)\./.test(p)));
};
const permissionsOf = (isAdmin: boolean) => (teamRole: string | null, orgRole: string | null) => {
  const json = permissionsJson(isAdmin)(teamRole, orgRole);
  return json === undefined ? undefined : Buffer.from(json);
};

/** The page as the list wrote it before it kept items: one statement, every item written from its row. */
async function wholePage(filter: PageFilter, afterId: number, limit: number) {
  const rows = await readWorkspacePage(pool, filter, afterId, limit);
  if (rows === undefined) return undefined;
  const items: string[] = [];
  let last: string | undefined;
  for (const row of rows) {
    if (items.length === limit) break;
    const permissions = permissionsJson(filter.isAdmin)(row[COL.team_role], row[COL.org_role]);
    if (permissions === undefined) continue;
    items.push(pageItemJson(row, addresses, permissions));
    last = row[COL.id]!;
  }
  return { items: items.join(','), nextAfter: rows.length > limit && last ? Number(last) : undefined };
}

const text = (page: ListPage | undefined) => page && { items: Buffer.concat(page.items).toString(), nextAfter: page.nextAfter };

const callers = () => [
  { userId: ids.developer, isAdmin: false },
  { userId: ids.viewer, isAdmin: false },
  { userId: ids.owner, isAdmin: false },
  { userId: ids.admin, isAdmin: true },
  { userId: ids.stranger, isAdmin: false },
];

test('a page from kept items is the same bytes as the page read whole, for every caller, team, cursor and filter', async () => {
  const kept = new WorkspaceItems(addresses);
  const statements: string[] = [];
  const counting = { query: (config: pg.QueryConfig) => (statements.push(config.name!), pool.query(config)) } as unknown as pg.Pool;
  for (const caller of callers()) {
    for (const teamId of [undefined, ids.team, ids.other, ids.empty, 999_999]) {
      for (const deleted of [false, true]) {
        const filter = { ...caller, teamId, deleted };
        for (const [afterId, limit] of [[0, 50], [0, 7], [12, 5]]) {
          const expected = await wholePage(filter, afterId, limit);
          // the first read fills `kept` (or finds some items of an earlier filter), the second takes every item from it
          assert.deepEqual(text(await readListPage(pool, kept, filter, afterId, limit, permissionsOf(caller.isAdmin))), expected, JSON.stringify(filter));
          statements.length = 0;
          assert.deepEqual(text(await readListPage(counting, kept, filter, afterId, limit, permissionsOf(caller.isAdmin))), expected, JSON.stringify(filter));
          assert.equal(statements.length, 1, `${JSON.stringify(filter)}: ${statements}`);
          assert.match(statements[0], /^workspace-keys-of-/);
        }
      }
    }
  }
  assert.ok(kept.size >= 28, `kept ${kept.size} items`);
});

test('a change by any statement, of the vault or of the caller role shows on the next page', async () => {
  const kept = new WorkspaceItems(addresses);
  const filter = { userId: ids.developer, isAdmin: false, teamId: ids.team, deleted: false };
  const read = async () => JSON.parse(`[${text(await readListPage(pool, kept, filter, 0, 50, permissionsOf(false)))!.items}]`) as Array<Record<string, any>>;
  const first = (await read())[0];
  // a statement that leaves `version` as it was still writes a new row version (xmin)
  await pool.query(`UPDATE workspaces SET status_detail = 'Changed behind the list' WHERE id = $1`, [first.id]);
  assert.equal((await read())[0].status_detail, 'Changed behind the list');
  await pool.query('DELETE FROM vaults WHERE workspace_id = $1', [first.id]);
  assert.equal((await read())[0].vault_id, undefined);
  const vault = (await pool.query<{ id: string }>('INSERT INTO vaults (workspace_id, created_at) VALUES ($1, now()) RETURNING id', [first.id])).rows[0].id;
  assert.equal((await read())[0].vault_id, Number(vault));
  assert.ok((await read())[0].permissions.includes('workspace.update'));
  await upsertTeamMember(pool, ids.team, ids.developer, 'viewer', new Date());
  try {
    assert.ok(!(await read())[0].permissions.includes('workspace.update'));
  } finally {
    await upsertTeamMember(pool, ids.team, ids.developer, 'developer', new Date());
  }
  await pool.query(`UPDATE workspaces SET deleted_at = now(), purge_after = now() + interval '7 days' WHERE id = $1`, [first.id]);
  try {
    assert.notEqual((await read())[0].id, first.id);
  } finally {
    await pool.query('UPDATE workspaces SET deleted_at = NULL, purge_after = NULL WHERE id = $1', [first.id]);
  }
  assert.deepEqual(text(await readListPage(pool, kept, filter, 0, 50, permissionsOf(false))), await wholePage(filter, 0, 50));
});

test('a row changed or purged between the page keys and its rows makes the page read whole, in one snapshot', async () => {
  const filter = { userId: ids.owner, isAdmin: false, deleted: false };
  const page = (await wholePage(filter, 0, 50))!;
  const [changed, purged] = (JSON.parse(`[${page.items}]`) as Array<{ id: number }>).slice(2, 4).map((w) => w.id);
  const statements: string[] = [];
  // The real pool, with a write of another session after the keys were read and before the rows are.
  const racing = {
    query: async (config: pg.QueryConfig) => {
      statements.push(config.name ?? config.text);
      if (config.name === 'workspace-page-rows-by-id') {
        await pool.query(`UPDATE workspaces SET name = 'renamed in between' WHERE id = $1`, [changed]);
        await pool.query('DELETE FROM vaults WHERE workspace_id = $1', [purged]);
        await pool.query('DELETE FROM workspaces WHERE id = $1', [purged]);
      }
      return pool.query(config);
    },
  } as unknown as pg.Pool;
  const read = text(await readListPage(racing, new WorkspaceItems(addresses), filter, 0, 50, permissionsOf(false)))!;
  assert.deepEqual(statements, ['workspace-keys-of-member', 'workspace-page-rows-by-id', 'workspace-page-of-member']);
  const items = JSON.parse(`[${read.items}]`) as Array<{ id: number; name: string }>;
  assert.equal(items.find((w) => w.id === changed)?.name, 'renamed in between');
  assert.equal(items.find((w) => w.id === purged), undefined);
  assert.deepEqual(read, await wholePage(filter, 0, 50));
});

test('the kept items stay within their capacity and a page past it is still whole', async () => {
  const kept = new WorkspaceItems(addresses, 5);
  const filter = { userId: ids.admin, isAdmin: true, deleted: false };
  for (let i = 0; i < 2; i++) assert.deepEqual(text(await readListPage(pool, kept, filter, 0, 20, permissionsOf(true))), await wholePage(filter, 0, 20));
  assert.equal(kept.size, 5);
});

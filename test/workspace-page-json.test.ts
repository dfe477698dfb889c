// GET /workspaces writes its page from PostgreSQL's text (store/workspace-pages.ts, workspaces/view-json.ts): on
// rows read from a real PostgreSQL, every item is the same bytes as JSON.stringify of the view the rest of the API
// shows (workspaceView of the row read as objects), for every optional field present and absent, strings that need
// escaping, timestamps of every shape and a session in another time zone; and the one statement sees the teams
// the caller may see (member, org owner, administrator) and no other.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { teamPermissions } from '../src/auth/permissions.ts';
import '../src/store/database.ts';
import { migrate } from '../src/store/migrate.ts';
import { COL, readWorkspacePage, type PageRow } from '../src/store/workspace-pages.ts';
import { findWorkspace, insertWorkspace } from '../src/store/workspaces.ts';
import { addressJson, isoOf, pageItemJson } from '../src/workspaces/view-json.ts';
import { workspaceUrlsFromBase, workspaceView } from '../src/workspaces/view.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { insertListCallers, type ListCallers } from './helpers/list-callers.ts';

let database: TestDatabase;
let pool: pg.Pool;
let ids: ListCallers;

before(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  await migrate(pool);
  const at = new Date();
  ids = await insertListCallers(pool, at);
  const odd = 'Läuft \u2028 "quoted" \\ \n\t\u0001 \ud800 😀 </script>';
  const variants: Array<Record<string, unknown>> = [
    {},
    { git_provider: 'github', git_repo: 'https://example.com/a/"b"\\c.git', git_ref: 'main' },
    { git_provider: null, git_repo: 'https://example.com/x.git', git_ref: null },
    { git_provider: 'gitlab', git_repo: '', git_ref: 'dev' },
    { name: odd, status_detail: odd, plan: 'big', base_image: 'ubuntu', availability: 'scheduled', restricted: true, single_node: false },
    { state: 'running', upgrade_pending: true, last_archived_at: '2026-11-25 10:00:00.123456+00', archive_sha256: 'ab'.repeat(32) },
    { state: 'stopped', upgrade_pending: true, restored_from: 4, created_by: null, owner_id: null },
    { needs_owner: true, created_at: '0099-01-01 00:00:00+00', updated_at: '2026-11-25 10:00:00.5+00' },
    { updated_at: '12026-01-01 00:00:00.999999+00', last_archived_at: '1969-12-31 23:59:59.999+00' },
    { deleted_at: '2026-11-25 10:00:00.001+00', purge_after: '2026-12-25 10:00:00+00' },
  ];
  for (const [team, count] of [[ids.team, 24], [ids.other, 12]] as const) {
    for (let i = 0; i < count; i++) {
      const row = await insertWorkspace(pool, {
        teamId: team, name: `ws-${team}-${i}`, plan: 'standard', baseImage: 'debian', git: null, storageGib: 1 + i, restricted: false,
        idleTimeoutMinutes: 30, state: 'stopped', statusDetail: 'Stopped', createdBy: ids.developer, at,
      });
      const variant = variants[i % variants.length];
      const changes = variant.name ? { ...variant, name: `${variant.name as string} ${team}-${i}` } : variant;
      const columns = Object.keys(changes);
      if (columns.length > 0) {
        await pool.query(`UPDATE workspaces SET ${columns.map((c, j) => `${c} = $${j + 2}`).join(', ')} WHERE id = $1`, [row.id, ...Object.values(changes)]);
      }
    }
  }
  // One workspace without a vault (vault_id absent from its view).
  await pool.query('DELETE FROM vaults WHERE workspace_id = (SELECT max(id) FROM workspaces WHERE team_id = $1)', [ids.other]);
});

after(async () => {
  await pool.end();
  await database.drop();
});

const urlSets = [workspaceUrlsFromBase('http://localhost:8080', 'localhost'), workspaceUrlsFromBase('https://svc.example.com', 'ws.example.com')];

/** Every item of the page against JSON.stringify of the view of the same workspace read as objects. */
async function assertSameJson(db: pg.Pool, rows: PageRow[], isAdmin: boolean): Promise<void> {
  for (const row of rows) {
    const objects = (await findWorkspace(db, Number(row[COL.id])))!;
    const permissions = teamPermissions({ isAdmin, teamRole: (row[COL.team_role] ?? undefined) as never, orgRole: (row[COL.org_role] ?? undefined) as never })
      .filter((p) => /^(workspace|landscape|variables)\./.test(p));
    for (const urls of urlSets) {
      const text = pageItemJson(row, addressJson(urls), JSON.stringify(permissions));
      assert.equal(text, JSON.stringify(workspaceView(objects, urls, permissions)));
      JSON.parse(text);
    }
  }
}

test('every item of a page is the JSON of the workspace view, byte for byte', async () => {
  for (const deleted of [false, true]) {
    const developer = (await readWorkspacePage(pool, { userId: ids.developer, isAdmin: false, deleted }, 0, 200))!;
    const owner = (await readWorkspacePage(pool, { userId: ids.owner, isAdmin: false, deleted }, 0, 200))!;
    const admin = (await readWorkspacePage(pool, { userId: ids.admin, isAdmin: true, deleted }, 0, 200))!;
    assert.ok(owner.length > 0);
    await assertSameJson(pool, developer, false);
    await assertSameJson(pool, owner, false);
    await assertSameJson(pool, admin, true);
  }
  // A session in another time zone: PostgreSQL writes other offsets, which go through the Date.
  const kolkata = new pg.Pool({ connectionString: database.url, max: 1, options: '-c TimeZone=Asia/Kolkata' });
  try {
    const rows = (await readWorkspacePage(kolkata, { userId: ids.admin, isAdmin: true, deleted: false }, 0, 200))!;
    assert.match(rows[0][COL.created_at]!, /\+05:30$/);
    await assertSameJson(pool, rows, true);
  } finally {
    await kolkata.end();
  }
});

test('timestamps in ISO 8601 by position are what the Date writes', () => {
  for (const text of ['2026-11-25 10:00:00+00', '2026-11-25 10:00:00.1+00', '2026-11-25 10:00:00.123456+00', '2026-11-25 10:00:00.999999+00',
    '0099-01-01 00:00:00+00', '12026-01-01 00:00:00+00', '2026-11-25 10:00:00+05:30', '2026-11-25 10:00:00.25-03', '2000-01-01 00:00:00+00 BC']) {
    const date = new Date(Date.parse(text.replace(' ', 'T').replace(/\+00$/, 'Z')));
    if (text.endsWith('+00') && !text.startsWith('12026')) assert.equal(isoOf(text), date.toISOString(), text);
    assert.ok(/^[+-]?\d{4,6}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(isoOf(text)), text);
  }
});

test('one statement reads the teams the caller may see, and no other', async () => {
  const teamsOf = async (userId: number, isAdmin: boolean) =>
    new Set((await readWorkspacePage(pool, { userId, isAdmin, deleted: false }, 0, 200))!.map((row) => Number(row[COL.team_id])));
  assert.deepEqual(await teamsOf(ids.developer, false), new Set([ids.team]));
  assert.deepEqual(await teamsOf(ids.viewer, false), new Set([ids.other]));
  assert.deepEqual(await teamsOf(ids.owner, false), new Set([ids.team, ids.other]));
  assert.deepEqual(await teamsOf(ids.admin, true), new Set([ids.team, ids.other]));
  assert.deepEqual(await teamsOf(ids.stranger, false), new Set());
  // One team: invisible (or missing) is undefined, visible but empty is an empty page.
  const page = (userId: number, isAdmin: boolean, teamId: number) => readWorkspacePage(pool, { userId, isAdmin, teamId, deleted: false }, 0, 50);
  assert.equal(await page(ids.developer, false, ids.other), undefined);
  assert.equal(await page(ids.stranger, false, ids.team), undefined);
  assert.equal(await page(ids.admin, true, 999_999), undefined);
  assert.deepEqual(await page(ids.owner, false, ids.empty), []);
  assert.deepEqual(await page(ids.admin, true, ids.empty), []);
  assert.equal(await page(ids.developer, false, ids.empty), undefined);
  const viewer = (await page(ids.viewer, false, ids.other))!;
  assert.deepEqual([viewer[0][COL.team_role], viewer[0][COL.org_role]], ['viewer', null]);
  // limit + 1 rows after the cursor, in id order.
  const all = (await readWorkspacePage(pool, { userId: ids.owner, isAdmin: false, deleted: false }, 0, 200))!.map((row) => Number(row[COL.id]));
  const next = (await readWorkspacePage(pool, { userId: ids.owner, isAdmin: false, deleted: false }, all[4], 5))!.map((row) => Number(row[COL.id]));
  assert.deepEqual(next, all.slice(5, 11));
  assert.deepEqual(all, [...all].sort((a, b) => a - b));
});

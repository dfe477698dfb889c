// A page of workspaces leaves as JSON.stringify writes it (GET /workspaces sets it as the reply's serializer): the
// same JSON as the serializer Fastify compiles from the page's schema, for views with every optional field and with
// none, and for strings that need escaping. Only the order of the keys differs: the view's (the schema's order)
// where the schema serializer writes the required keys first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fastJsonStringify from 'fast-json-stringify';
import { Page } from '../api/conventions/pagination.ts';
import { WorkspaceSchema } from '../api/routes/workspace-schemas.ts';
import type { WorkspaceListRow } from '../store/workspaces.ts';
import { workspaceUrlsFromBase, workspaceView } from './view.ts';

const bare: WorkspaceListRow = {
  id: 7, team_id: 3, name: 'shop', plan: 'standard', base_image: 'debian', git_provider: null, git_repo: null, git_ref: null, source_ready: true,
  storage_gib: 10, availability: 'always', restricted: false, egress: 'on', team_egress: 'on', single_node: true, state: 'stopped', status_detail: 'Stopped',
  idle_timeout_minutes: 30, last_archived_at: null, archive_sha256: null, restored_from: null, upgrade_pending: false,
  created_by: null, owner_id: null, needs_owner: false, created_at: new Date('2026-11-25T10:00:00.123Z'),
  updated_at: new Date('2026-11-25T10:00:01Z'), deleted_at: null, purge_after: null, vault_id: null,
};
const full: WorkspaceListRow = {
  ...bare, id: 9_007_199_254_740_991, git_provider: 'github', git_repo: 'https://example.com/a/"b"\\c.git', git_ref: 'main', source_ready: false,
  state: 'running', status_detail: 'Läuft \u2028 "quoted" \n\t\u0001 \ud800 😀', last_archived_at: new Date('0099-01-01T00:00:00Z'),
  egress: 'off', archive_sha256: 'ab'.repeat(32), restored_from: 4, upgrade_pending: true, created_by: 2, owner_id: 2, needs_owner: true,
  deleted_at: new Date('+010000-01-01T00:00:00Z'), purge_after: new Date('2026-12-25T10:00:00.999Z'), vault_id: 12,
};

test('a page of workspace views is the JSON of the schema serializer', () => {
  const bySchema = fastJsonStringify(Page(WorkspaceSchema) as Parameters<typeof fastJsonStringify>[0]);
  for (const urls of [workspaceUrlsFromBase('http://localhost:8080', 'localhost'), workspaceUrlsFromBase('https://svc.example.com', 'ws.example.com')]) {
    const items = [workspaceView(bare, urls), workspaceView(full, urls, ['workspace.view', 'variables.manage']), workspaceView(full, urls, [])];
    for (const page of [{ items }, { items, next_cursor: 'eyJhIjoxfQ.c2ln' }, { items: [] }]) {
      const text = JSON.stringify(page);
      assert.deepStrictEqual(JSON.parse(text), JSON.parse(bySchema(page)));
      assert.equal(text.length, bySchema(page).length);
    }
  }
});

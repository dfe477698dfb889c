// A page of GET /workspaces as JSON. The server keeps each workspace's item (its JSON around the caller's
// permissions, as UTF-8) by row version, so a page usually costs one statement of small rows, its keys (each row's
// version and the caller's roles), and no row parsing: only the rows it does not keep at that version are read, by
// id. When one of those changed between the two reads, the page is read whole in one statement instead, so every
// page is one snapshot of the table. docs/api.md, "Lists at scale".
import type { Queryable } from '../store/database.ts';
import {
  COL, idOfVersion, readWorkspacePage, readWorkspacePageKeys, readWorkspacePageRows, rowVersionOf, type PageFilter, type PageKey, type PageRow,
} from '../store/workspace-pages.ts';
import { pageItemParts, type AddressJson } from './view-json.ts';

/** Items kept per configuration: about 1 KiB each. */
export const KEPT_ITEMS = 20_000;

/** An item's UTF-8 before and after its permissions: a page is copied together from buffers, not encoded per request. */
interface KeptItem {
  head: Buffer;
  tail: Buffer;
}

/** The items' JSON by row version (rowVersionOf), the oldest kept first out when full. */
export class WorkspaceItems {
  private readonly kept = new Map<string, KeptItem>();

  constructor(readonly addresses: AddressJson, private readonly capacity = KEPT_ITEMS) {}

  get size(): number {
    return this.kept.size;
  }

  get(version: string): KeptItem | undefined {
    return this.kept.get(version);
  }

  keep(row: PageRow): KeptItem {
    const [head, tail] = pageItemParts(row, this.addresses);
    const item = { head: Buffer.from(head), tail: Buffer.from(tail) };
    this.kept.set(rowVersionOf(row), item);
    if (this.kept.size > this.capacity) this.kept.delete(this.kept.keys().next().value!);
    return item;
  }
}

/** The JSON array (UTF-8) of the caller's workspace permissions on a team by their roles; undefined: not visible. */
export type PermissionsOf = (teamRole: string | null, orgRole: string | null) => Buffer | undefined;

export interface ListPage {
  /** The items' JSON, comma-separated, as UTF-8 chunks in order. */
  items: Buffer[];
  /** The id of the page's last workspace when a next page follows. */
  nextAfter?: number;
}

interface Visible<T> {
  row: T;
  permissions: Buffer;
}

/**
 * The page's visible rows (up to limit) with the caller's permissions, and whether more follow; the statement's
 * rule and permissionsOf agree, this keeps it so. Rows of one team share their roles: asked once per run of them.
 */
function visible<T>(rows: T[], limit: number, roles: (row: T) => [string | null, string | null], permissionsOf: PermissionsOf) {
  const page: Array<Visible<T>> = [];
  let teamRole: string | null | undefined;
  let orgRole: string | null | undefined;
  let permissions: Buffer | undefined;
  for (const row of rows) {
    if (page.length === limit) break;
    const [team, org] = roles(row);
    if (team !== teamRole || org !== orgRole) {
      [teamRole, orgRole] = [team, org];
      permissions = permissionsOf(team, org);
    }
    if (permissions !== undefined) page.push({ row, permissions });
  }
  return { page, more: rows.length > limit };
}

const COMMA = Buffer.from(',');

function written(items: KeptItem[], page: Array<Visible<unknown>>, more: boolean, lastId: string | undefined): ListPage {
  const chunks: Buffer[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) chunks.push(COMMA);
    chunks.push(items[i].head, page[i].permissions, items[i].tail);
  }
  return { items: chunks, nextAfter: more && lastId !== undefined ? Number(lastId) : undefined };
}

const keyRoles = (key: PageKey): [string | null, string | null] => [key[1], key[2]];
const rowRoles = (row: PageRow): [string | null, string | null] => [row[COL.team_role], row[COL.org_role]];

/**
 * Up to `limit` workspaces after `afterId` that the caller may see; undefined when `filter.teamId` names a team the
 * caller may not see. Items are taken from `kept` by row version and kept for the next page.
 */
export async function readListPage(
  db: Queryable, kept: WorkspaceItems, filter: PageFilter, afterId: number, limit: number, permissionsOf: PermissionsOf,
): Promise<ListPage | undefined> {
  const keys = await readWorkspacePageKeys(db, filter, afterId, limit);
  if (keys === undefined) return undefined;
  const { page, more } = visible(keys, limit, keyRoles, permissionsOf);
  let items = page.map(({ row }) => kept.get(row[0]!));
  const missing = page.filter((_, i) => items[i] === undefined).map(({ row }) => idOfVersion(row[0]!));
  if (missing.length > 0) {
    for (const row of await readWorkspacePageRows(db, missing)) kept.keep(row);
    items = page.map(({ row }) => kept.get(row[0]!));
    // changed or gone between the two reads
    if (items.includes(undefined)) return readWholePage(db, kept, filter, afterId, limit, permissionsOf);
  }
  return written(items as KeptItem[], page, more, page.length > 0 ? idOfVersion(page[page.length - 1].row[0]!) : undefined);
}

/** The page read whole in one statement (one snapshot), its items kept. */
async function readWholePage(
  db: Queryable, kept: WorkspaceItems, filter: PageFilter, afterId: number, limit: number, permissionsOf: PermissionsOf,
): Promise<ListPage | undefined> {
  const rows = await readWorkspacePage(db, filter, afterId, limit);
  if (rows === undefined) return undefined;
  const { page, more } = visible(rows, limit, rowRoles, permissionsOf);
  return written(page.map(({ row }) => kept.keep(row)), page, more, page.at(-1)?.row[COL.id] ?? undefined);
}

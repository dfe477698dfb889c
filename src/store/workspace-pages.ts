// A page of GET /workspaces in one statement: the caller's standing on the teams and each team's rows, read
// together (one round trip), as PostgreSQL's text (src/workspaces/view-json.ts writes it into the page's JSON).
// The same page can be read as its rows' keys alone (each row's version, the caller's roles) for a server that keeps the
// items' JSON by row version (src/workspaces/list-page.ts); the rows it lacks are read by id.
// docs/api.md, "Lists at scale", shows the plans.
import type { Queryable } from './database.ts';

/**
 * The columns of a page row, in this order, each as PostgreSQL's text or null: the workspace's (what
 * workspaces/view.ts shows of it, then its row version: `xmin` and `version`), its vault, then the caller's role
 * on its team and on the team's org.
 */
export const PAGE_COLUMNS = [
  'id', 'team_id', 'name', 'plan', 'base_image', 'git_provider', 'git_repo', 'git_ref', 'source_ready', 'storage_gib', 'availability',
  'restricted', 'egress', 'team_egress', 'single_node', 'state', 'status_detail', 'idle_timeout_minutes', 'last_archived_at', 'archive_sha256',
  'restored_from', 'upgrade_pending', 'created_by', 'owner_id', 'needs_owner', 'created_at', 'updated_at', 'deleted_at',
  'purge_after', 'xmin', 'version', 'vault_id', 'team_role', 'org_role',
] as const;
export type PageColumn = (typeof PAGE_COLUMNS)[number];
/** A row as PostgreSQL wrote it: `PAGE_COLUMNS[i]` at index i. */
export type PageRow = Array<string | null>;
/** Index of each column in a PageRow. */
export const COL = Object.fromEntries(PAGE_COLUMNS.map((name, i) => [name, i])) as Record<PageColumn, number>;

/**
 * A page key as PostgreSQL wrote it: the row's version (`rowVersionOf`), then the caller's role on its team and on
 * the team's org.
 */
export type PageKey = [version: string | null, teamRole: string | null, orgRole: string | null];

/**
 * A version of a workspace's page row, as the key statements write it: `<id> <xmin> <version> <vault id or nothing>`.
 * `xmin` is the transaction that wrote this version of the row, whatever statement did; the row's own `version`
 * keeps an xmin reused after wraparound from passing for the same version; the vault is another table's row.
 */
export function rowVersionOf(row: PageRow): string {
  return `${row[COL.id]} ${row[COL.xmin]} ${row[COL.version]} ${row[COL.vault_id] ?? ''}`;
}
/** The workspace id of a row version. */
export const idOfVersion = (version: string) => version.slice(0, version.indexOf(' '));

/** What a statement reads of each workspace row (`columns`), and what it writes of it with its vault (`select`). */
interface Shape {
  name: string;
  columns: readonly string[];
  select(alias: string): string;
}
const of = (alias: string, columns: readonly string[]) => columns.map((c) => `${alias}.${c}`).join(', ');
const vaultOf = (alias: string) => `(SELECT v.id FROM vaults v WHERE v.workspace_id = ${alias}.id)`;
const ROW_COLUMNS = PAGE_COLUMNS.slice(0, PAGE_COLUMNS.indexOf('vault_id'));
const ROWS: Shape = { name: 'page', columns: ROW_COLUMNS, select: (alias) => `${of(alias, ROW_COLUMNS)}, ${vaultOf(alias)} AS vault_id` };
const KEYS: Shape = {
  name: 'keys',
  columns: ['id', 'xmin', 'version'],
  select: (alias) => `${alias}.id || ' ' || ${alias}.xmin || ' ' || ${alias}.version || ' ' || coalesce(${vaultOf(alias)}::text, '') AS row_version`,
};

/** The page's rows with their vault: one probe of vaults_workspace_id_key per row of the page (not of each team's). */
const withVault = (shape: Shape, page: string) => `SELECT ${shape.select('p')}, p.team_role, p.org_role FROM (${page}) p ORDER BY p.id`;

/** The caller's ($1) roles on teams and their orgs. */
const standings = `SELECT t.id, tm.role AS team_role, om.role AS org_role FROM teams t
  LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $1
  LEFT JOIN org_members om ON om.org_id = t.org_id AND om.user_id = $1`;

// A team's range of workspaces_team (team_id, id) after the cursor ($3), said as a row comparison: with `team_id = s.id`
// PostgreSQL may walk the primary key instead and filter by team, which reads every other team's rows before a
// small team's page (21,000 rows for a team of 5, docs/api.md "Lists at scale").
const teamRange = (shape: Shape) => `SELECT ${of('w', shape.columns)} FROM workspaces w
      WHERE (w.team_id, w.id) > (s.id, $3) AND w.team_id <= s.id AND (w.deleted_at IS NOT NULL) = $2
      ORDER BY w.team_id, w.id LIMIT $4`;

// Named statements: each pooled connection parses them once; none takes an array, so PostgreSQL settles on one
// generic plan for each after five runs and plans no more.
/** A member's page: every team they belong to or whose org they own, each team's next rows, merged. */
const ofMember = (shape: Shape) => ({
  name: `workspace-${shape.name}-of-member`,
  text: withVault(shape, `WITH s AS (${standings} WHERE tm.user_id IS NOT NULL OR om.role = 'owner')
    SELECT w.*, s.team_role, s.org_role FROM s CROSS JOIN LATERAL (${teamRange(shape)}) w ORDER BY w.id LIMIT $4`),
});
/**
 * One team's page ($5), for an administrator ($6) or a member of the team or owner of its org. A visible team
 * without rows on the page gives one row of nulls but its roles (so that it is told apart from an invisible one).
 */
const ofTeam = (shape: Shape) => ({
  name: `workspace-${shape.name}-of-team`,
  text: `WITH s AS (${standings} WHERE t.id = $5 AND ($6 OR tm.user_id IS NOT NULL OR om.role = 'owner'))
    SELECT ${shape.select('w')}, s.team_role, s.org_role
    FROM s LEFT JOIN LATERAL (${teamRange(shape)}) w ON true ORDER BY w.id`,
});
/** An administrator's page of every team ($1 deleted, after $2, $3 rows): the primary key after the cursor (no roles needed). */
const ofAll = (shape: Shape) => ({
  name: `workspace-${shape.name}-of-all`,
  text: withVault(shape, `SELECT ${of('w', shape.columns)}, NULL::text AS team_role, NULL::text AS org_role FROM workspaces w
    WHERE (w.deleted_at IS NOT NULL) = $1 AND w.id > $2 ORDER BY w.id LIMIT $3`),
});
const STATEMENTS = {
  page: { ofMember: ofMember(ROWS), ofTeam: ofTeam(ROWS), ofAll: ofAll(ROWS) },
  keys: { ofMember: ofMember(KEYS), ofTeam: ofTeam(KEYS), ofAll: ofAll(KEYS) },
};
/** Workspaces by id ($1), as page rows without roles: the rows a page's keys name that the server does not keep. */
const BY_ID = {
  name: 'workspace-page-rows-by-id',
  text: `SELECT ${ROWS.select('w')}, NULL::text AS team_role, NULL::text AS org_role FROM workspaces w WHERE w.id = ANY($1::bigint[])`,
};

/** Every column as the text PostgreSQL sent: no Dates, no numbers, no objects made for a row. */
const asText = (value: string) => value;
const textTypes = { getTypeParser: () => asText };

export interface PageFilter {
  userId: number;
  isAdmin: boolean;
  /** One team's page; none: every team the caller may see. */
  teamId?: number;
  deleted: boolean;
}

async function readPage(db: Queryable, shape: keyof typeof STATEMENTS, filter: PageFilter, afterId: number, limit: number) {
  const statements = STATEMENTS[shape];
  const values: unknown[] = [filter.userId, filter.deleted, afterId, limit + 1];
  if (filter.teamId !== undefined) {
    const rows = (await db.query<string[]>({ ...statements.ofTeam, values: [...values, filter.teamId, filter.isAdmin], rowMode: 'array', types: textTypes })).rows;
    if (rows.length === 0) return undefined;
    return rows[0][0] === null ? [] : rows;
  }
  if (filter.isAdmin) return (await db.query<string[]>({ ...statements.ofAll, values: values.slice(1), rowMode: 'array', types: textTypes })).rows;
  return (await db.query<string[]>({ ...statements.ofMember, values, rowMode: 'array', types: textTypes })).rows;
}

/**
 * Up to `limit + 1` rows after workspace `afterId`, in id order, of the teams the caller may see. With `teamId`:
 * undefined when the caller may not see that team (or it does not exist), else its rows (none for an empty page).
 */
export function readWorkspacePage(db: Queryable, filter: PageFilter, afterId: number, limit: number): Promise<PageRow[] | undefined> {
  return readPage(db, 'page', filter, afterId, limit);
}

/** The same page as readWorkspacePage, each row as its key. */
export function readWorkspacePageKeys(db: Queryable, filter: PageFilter, afterId: number, limit: number): Promise<PageKey[] | undefined> {
  return readPage(db, 'keys', filter, afterId, limit) as Promise<PageKey[] | undefined>;
}

/** The page rows of these workspaces (without roles), in no order; a workspace gone since is absent. */
export async function readWorkspacePageRows(db: Queryable, ids: string[]): Promise<PageRow[]> {
  return (await db.query<PageRow>({ ...BY_ID, values: [ids], rowMode: 'array', types: textTypes })).rows;
}

/** The statements' text, for EXPLAIN (docs/api.md). */
export const PAGE_STATEMENTS = {
  ofMember: STATEMENTS.page.ofMember.text, ofTeam: STATEMENTS.page.ofTeam.text, ofAll: STATEMENTS.page.ofAll.text,
  keysOfMember: STATEMENTS.keys.ofMember.text, keysOfTeam: STATEMENTS.keys.ofTeam.text, keysOfAll: STATEMENTS.keys.ofAll.text,
  rowsById: BY_ID.text,
};

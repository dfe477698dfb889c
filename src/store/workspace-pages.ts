// A page of GET /workspaces in one statement: the caller's standing on the teams and each team's rows, read
// together (one round trip), as PostgreSQL's text (src/workspaces/view-json.ts writes it into the page's JSON).
// docs/api.md, "Lists at scale", shows the plans.
import type { Queryable } from './database.ts';

/**
 * The columns of a page row, in this order, each as PostgreSQL's text or null: the workspace's (what
 * workspaces/view.ts shows of it), its vault, then the caller's role on its team and on the team's org.
 */
export const PAGE_COLUMNS = [
  'id', 'team_id', 'name', 'plan', 'base_image', 'git_provider', 'git_repo', 'git_ref', 'storage_gib', 'availability',
  'restricted', 'single_node', 'state', 'status_detail', 'idle_timeout_minutes', 'last_archived_at', 'archive_sha256',
  'restored_from', 'upgrade_pending', 'created_by', 'owner_id', 'needs_owner', 'created_at', 'updated_at', 'deleted_at',
  'purge_after', 'vault_id', 'team_role', 'org_role',
] as const;
export type PageColumn = (typeof PAGE_COLUMNS)[number];
/** A row as PostgreSQL wrote it: `PAGE_COLUMNS[i]` at index i. */
export type PageRow = Array<string | null>;
/** Index of each column in a PageRow. */
export const COL = Object.fromEntries(PAGE_COLUMNS.map((name, i) => [name, i])) as Record<PageColumn, number>;

const ROW_COLUMNS = PAGE_COLUMNS.slice(0, PAGE_COLUMNS.indexOf('vault_id'));
const WORKSPACE_COLUMNS = ROW_COLUMNS.map((c) => `w.${c}`).join(', ');

/** The page's rows with their vault: one probe of vaults_workspace_id_key per row of the page (not of each team's). */
const withVault = (page: string) =>
  `SELECT ${ROW_COLUMNS.map((c) => `p.${c}`).join(', ')}, (SELECT v.id FROM vaults v WHERE v.workspace_id = p.id) AS vault_id,
    p.team_role, p.org_role FROM (${page}) p ORDER BY p.id`;

/** The caller's ($1) roles on teams and their orgs. */
const standings = `SELECT t.id, tm.role AS team_role, om.role AS org_role FROM teams t
  LEFT JOIN team_members tm ON tm.team_id = t.id AND tm.user_id = $1
  LEFT JOIN org_members om ON om.org_id = t.org_id AND om.user_id = $1`;

// A team's range of workspaces_team (team_id, id) after the cursor ($3), said as a row comparison: with `team_id = s.id`
// PostgreSQL may walk the primary key instead and filter by team, which reads every other team's rows before a
// small team's page (21,000 rows for a team of 5, docs/api.md "Lists at scale").
const teamRange = `SELECT ${WORKSPACE_COLUMNS}, s.team_role, s.org_role FROM workspaces w
    WHERE (w.team_id, w.id) > (s.id, $3) AND w.team_id <= s.id AND (w.deleted_at IS NOT NULL) = $2
    ORDER BY w.team_id, w.id LIMIT $4`;

// Named statements: each pooled connection parses them once; none takes an array, so PostgreSQL settles on one
// generic plan for each after five runs and plans no more.
/** A member's page: every team they belong to or whose org they own, each team's next rows, merged. */
const OF_MEMBER = {
  name: 'workspace-page-of-member',
  text: withVault(`WITH s AS (${standings} WHERE tm.user_id IS NOT NULL OR om.role = 'owner')
    SELECT w.* FROM s CROSS JOIN LATERAL (${teamRange}) w ORDER BY w.id LIMIT $4`),
};
/**
 * One team's page ($5), for an administrator ($6) or a member of the team or owner of its org. A visible team
 * without rows on the page gives one row of nulls but its roles (so that it is told apart from an invisible one).
 */
const OF_TEAM = {
  name: 'workspace-page-of-team',
  text: `WITH s AS (${standings} WHERE t.id = $5 AND ($6 OR tm.user_id IS NOT NULL OR om.role = 'owner'))
    SELECT ${WORKSPACE_COLUMNS}, (SELECT v.id FROM vaults v WHERE v.workspace_id = w.id) AS vault_id, s.team_role, s.org_role
    FROM s LEFT JOIN LATERAL (SELECT ${WORKSPACE_COLUMNS} FROM workspaces w
      WHERE (w.team_id, w.id) > (s.id, $3) AND w.team_id <= s.id AND (w.deleted_at IS NOT NULL) = $2
      ORDER BY w.team_id, w.id LIMIT $4) w ON true ORDER BY w.id`,
};
/** An administrator's page of every team ($1 deleted, after $2, $3 rows): the primary key after the cursor (no roles needed). */
const OF_ALL = {
  name: 'workspace-page-of-all',
  text: withVault(`SELECT ${WORKSPACE_COLUMNS}, NULL::text AS team_role, NULL::text AS org_role FROM workspaces w
    WHERE (w.deleted_at IS NOT NULL) = $1 AND w.id > $2 ORDER BY w.id LIMIT $3`),
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

/**
 * Up to `limit + 1` rows after workspace `afterId`, in id order, of the teams the caller may see. With `teamId`:
 * undefined when the caller may not see that team (or it does not exist), else its rows (none for an empty page).
 */
export async function readWorkspacePage(db: Queryable, filter: PageFilter, afterId: number, limit: number): Promise<PageRow[] | undefined> {
  const values: unknown[] = [filter.userId, filter.deleted, afterId, limit + 1];
  if (filter.teamId !== undefined) {
    const rows = (await db.query<PageRow>({ ...OF_TEAM, values: [...values, filter.teamId, filter.isAdmin], rowMode: 'array', types: textTypes })).rows;
    if (rows.length === 0) return undefined;
    return rows[0][COL.id] === null ? [] : rows;
  }
  if (filter.isAdmin) return (await db.query<PageRow>({ ...OF_ALL, values: values.slice(1), rowMode: 'array', types: textTypes })).rows;
  return (await db.query<PageRow>({ ...OF_MEMBER, values, rowMode: 'array', types: textTypes })).rows;
}

/** The statements' text, for EXPLAIN (docs/api.md). */
export const PAGE_STATEMENTS = { ofMember: OF_MEMBER.text, ofTeam: OF_TEAM.text, ofAll: OF_ALL.text };

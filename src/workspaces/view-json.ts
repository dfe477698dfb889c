// A page of GET /workspaces written straight from PostgreSQL's text (store/workspace-pages.ts): the same bytes as
// JSON.stringify of workspaceView (view.ts) for each row, keys in the same order, without a Date, a number, a row
// object or a view object made per row (src/workspaces/view-json.test.ts compares the two on rows read from
// PostgreSQL). Numbers are PostgreSQL's own digits, booleans its `t`/`f`, timestamps turned into ISO 8601 by position.
import { COL, type PageRow } from '../store/workspace-pages.ts';
import { parseTimestamptz } from '../store/timestamps.ts';
import { addressParts, type WorkspaceUrls } from './view.ts';

/** The JSON text of a workspace's addresses around its id, made once per configuration. */
export interface AddressJson {
  ide: string;
  dev: string;
  after: string;
}

export function addressJson(urls: WorkspaceUrls): AddressJson {
  const { before, after } = addressParts(urls);
  // A JSON string cut at the id: escaped text before it (with the opening quote), after it (with the closing one).
  const open = (text: string) => JSON.stringify(text).slice(0, -1);
  return { ide: open(`${before}ide-w`), dev: open(`${before}w`), after: JSON.stringify(after).slice(1) };
}

const digit = (text: string, i: number) => {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
};

/**
 * `Date.toISOString()` of a timestamptz as PostgreSQL writes it in UTC (`2026-11-25 10:00:00.123456+00`): the
 * milliseconds are the fraction's first three digits (a Date truncates the rest). Any other shape (another time
 * zone, years past 9999, BC) goes through the Date.
 */
export function isoOf(text: string): string {
  const n = text.length;
  if (
    n >= 22 && text.charCodeAt(n - 3) === 43 /* + */ && text.charCodeAt(n - 2) === 48 && text.charCodeAt(n - 1) === 48 &&
    text[4] === '-' && text[7] === '-' && text[10] === ' ' && text[13] === ':' && text[16] === ':' && (n === 22 || (text[19] === '.' && n >= 24 && n <= 29))
  ) {
    let fraction = '';
    for (let i = 20; i < n - 3; i++) {
      if (!digit(text, i)) return (parseTimestamptz(text) as Date).toISOString();
      if (fraction.length < 3) fraction += text[i];
    }
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(3, '0')}Z`;
  }
  return (parseTimestamptz(text) as Date).toISOString();
}

const bool = (text: string | null) => (text === 't' ? 'true' : 'false');
const str = (text: string | null) => JSON.stringify(text);
const time = (text: string) => `"${isoOf(text)}"`;

/**
 * One workspace of the page around the caller's permissions: its JSON is `head + permissions + tail`, where
 * `permissions` is the JSON array of the caller's workspace permissions on its team.
 */
export function pageItemParts(row: PageRow, addresses: AddressJson): [head: string, tail: string] {
  const id = row[COL.id]!;
  const gitRepo = row[COL.git_repo];
  const gitRef = row[COL.git_ref];
  const vault = row[COL.vault_id];
  const archivedAt = row[COL.last_archived_at];
  const restoredFrom = row[COL.restored_from];
  const createdBy = row[COL.created_by];
  const owner = row[COL.owner_id];
  const deletedAt = row[COL.deleted_at];
  const purgeAfter = row[COL.purge_after];
  const state = row[COL.state];
  const head =
    `{"id":${id},"team_id":${row[COL.team_id]},"name":${str(row[COL.name])},"plan":${str(row[COL.plan])},"base_image":${str(row[COL.base_image])}` +
    (gitRepo ? `,"git":{"provider":${str(row[COL.git_provider] ?? 'git')},"repo":${str(gitRepo)}${gitRef === null ? '' : `,"ref":${str(gitRef)}`},"cloned":${bool(row[COL.source_ready])}}` : '') +
    `,"storage_gib":${row[COL.storage_gib]},"availability":${str(row[COL.availability])},"restricted":${bool(row[COL.restricted])}` +
    `,"egress":${str(row[COL.egress])},"team_egress":${str(row[COL.team_egress])}` +
    `,"state":${str(state)},"status_detail":${str(row[COL.status_detail])}` +
    `,"urls":{"ide":${addresses.ide}${id}${addresses.after},"dev":${addresses.dev}${id}${addresses.after}}` +
    (vault === null ? '' : `,"vault_id":${vault}`) +
    `,"single_node":${bool(row[COL.single_node])},"idle_timeout_minutes":${row[COL.idle_timeout_minutes]}` +
    (archivedAt === null ? '' : `,"last_archived_at":${time(archivedAt)}`) +
    `,"archived":${row[COL.archive_sha256] !== null}` +
    (restoredFrom === null ? '' : `,"restored_from":${restoredFrom}`) +
    `,"upgrade_pending":${row[COL.upgrade_pending] === 't' && state === 'running'}` +
    (createdBy === null ? '' : `,"created_by":${createdBy}`) +
    (owner === null ? '' : `,"owner_id":${owner}`) +
    `,"needs_owner":${row[COL.needs_owner] === 't' || owner === null},"permissions":`;
  const tail =
    `,"created_at":${time(row[COL.created_at]!)},"updated_at":${time(row[COL.updated_at]!)}` +
    (deletedAt === null ? '' : `,"deleted_at":${time(deletedAt)}`) +
    (purgeAfter === null ? '' : `,"purge_after":${time(purgeAfter)}`) +
    '}';
  return [head, tail];
}

/** One workspace of the page; `permissions` is the JSON array of the caller's workspace permissions on its team. */
export function pageItemJson(row: PageRow, addresses: AddressJson, permissions: string): string {
  const [head, tail] = pageItemParts(row, addresses);
  return head + permissions + tail;
}

// A page of GET /workspaces written straight from PostgreSQL's text (store/workspace-pages.ts): the same bytes as
// JSON.stringify of workspaceView (view.ts) for each row, keys in the same order, without a Date, a number, a row
// object or a view object made per row (test/workspace-page-json.test.ts compares the two on rows read from
// PostgreSQL). The plain fields come as runs of JSON that PostgreSQL wrote; timestamps are turned into ISO 8601 by
// position.
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

const time = (text: string) => `"${isoOf(text)}"`;

/**
 * One workspace of the page; `permissions` is the JSON array of the caller's workspace permissions on its team.
 * PostgreSQL wrote the runs of plain fields (store/workspace-pages.ts, `json_*`); this adds what the server knows
 * (the addresses) or writes as the Date would (timestamps) between them, in workspaceView's key order.
 */
export function pageItemJson(row: PageRow, addresses: AddressJson, permissions: string): string {
  const id = row[COL.id]!;
  const vault = row[COL.vault_id];
  const archivedAt = row[COL.last_archived_at];
  const deletedAt = row[COL.deleted_at];
  const purgeAfter = row[COL.purge_after];
  return (
    `{"id":${id},"team_id":${row[COL.team_id]}${row[COL.json_name_to_status]}` +
    `,"urls":{"ide":${addresses.ide}${id}${addresses.after},"dev":${addresses.dev}${id}${addresses.after}}` +
    (vault === null ? '' : `,"vault_id":${vault}`) +
    row[COL.json_single_node_to_idle] +
    (archivedAt === null ? '' : `,"last_archived_at":${time(archivedAt)}`) +
    row[COL.json_archived_to_needs_owner] +
    `,"permissions":${permissions}` +
    `,"created_at":${time(row[COL.created_at]!)},"updated_at":${time(row[COL.updated_at]!)}` +
    (deletedAt === null ? '' : `,"deleted_at":${time(deletedAt)}`) +
    (purgeAfter === null ? '' : `,"purge_after":${time(purgeAfter)}`) +
    '}'
  );
}

// Telling "PostgreSQL is down or going away" from a fault of svc (issue 33, item 8): the API answers the first with
// 503 unavailable and Retry-After (spec 7: a dependency is down), the second with 500 and an incident id.

export interface DatabaseAddress {
  host: string;
  port: number;
}

/** Where the pool connects: the host and port of a postgres:// URL (PostgreSQL's defaults when left out). */
export function databaseAddress(url: string): DatabaseAddress {
  // `postgres://user@/db?host=/run/postgresql` (a socket, no host) is no WHATWG URL until it names one.
  const parsed = URL.canParse(url) ? new URL(url) : new URL(url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/]*@)?)\//, '$1localhost/'));
  const socketDir = parsed.searchParams.get('host');
  return { host: socketDir ?? (parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost'), port: Number(parsed.port || 5432) };
}

/**
 * SQLSTATEs of a server that is not there for us now: admin_shutdown, crash_shutdown, cannot_connect_now (starting
 * up or shutting down), too_many_connections; and the whole class 08, connection exceptions.
 */
const unavailableStates = new Set(['57P01', '57P02', '57P03', '53300']);
/** What pg says of a connection it lost or could not make in time; the texts are pg's own (pg and pg-pool). */
const lostConnection = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;
/** Socket errors of a connection that could not be made: the database's only when they name its address. */
const connectFailures = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT']);
const lookupFailures = new Set(['ENOTFOUND', 'EAI_AGAIN']);
/** Socket errors of a connection that broke; they name no address (pg's client passes them on as they are). */
const dropped = new Set(['ECONNRESET', 'EPIPE']);

interface ErrorFields {
  code?: unknown;
  severity?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
  hostname?: unknown;
  errors?: unknown;
  cause?: unknown;
}

/** True when `error` (or what caused it) says the database at `at` cannot be reached or is going away. */
export function isDatabaseUnavailable(error: unknown, at: DatabaseAddress, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const fields = error as ErrorFields;
  const code = typeof fields.code === 'string' ? fields.code : '';
  // A PostgreSQL error (pg's DatabaseError carries the server's severity).
  if (typeof fields.severity === 'string' && (unavailableStates.has(code) || code.startsWith('08'))) return true;
  if (typeof fields.message === 'string' && lostConnection.test(fields.message)) return true;
  if (dropped.has(code) && fields.address === undefined) return true;
  if (connectFailures.has(code) && namesDatabase(fields, at)) return true;
  if (lookupFailures.has(code) && fields.hostname === at.host) return true;
  // Node's connect to a name of several addresses fails with an AggregateError of each attempt's error.
  if (Array.isArray(fields.errors) && fields.errors.some((inner) => isDatabaseUnavailable(inner, at, depth + 1))) return true;
  return isDatabaseUnavailable(fields.cause, at, depth + 1);
}

function namesDatabase(fields: ErrorFields, at: DatabaseAddress): boolean {
  if (fields.port === at.port) return true;
  // A Unix socket: <directory>/.s.PGSQL.<port>.
  return typeof fields.address === 'string' && fields.address === `${at.host}/.s.PGSQL.${at.port}`;
}

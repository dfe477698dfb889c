// The PostgreSQL client tools that dump and restore managed postgres instances: pg_dump, pg_restore and psql 17,
// which scripts/setup-pg-client.sh installs under <tools>/pg-client/17 (the server binaries' npm packages ship none,
// and Debian 12's client 15 refuses to dump a 16 or 17 server). Client 17 reads servers 15 to 17.
import { access, constants, readFile } from 'node:fs/promises';
import path from 'node:path';
import { problem, type Problem } from '../core/problems.ts';

export const PG_CLIENT_MAJOR = 17;

export interface PgClientTools {
  /** The client's version, e.g. 17.12. */
  version: string;
  pgDump: string;
  pgRestore: string;
  psql: string;
}

export const pgClientDir = (toolsDir: string) => path.join(toolsDir, 'pg-client', String(PG_CLIENT_MAJOR));

/** The tools when the set-up script finished installing them (its marker written last), else undefined. */
export async function findPgClientTools(toolsDir: string): Promise<PgClientTools | undefined> {
  const dir = pgClientDir(toolsDir);
  const version = (await readFile(path.join(dir, 'pg-client.version'), 'utf8').catch(() => '')).trim();
  if (!version.startsWith(`${PG_CLIENT_MAJOR}.`)) return undefined;
  const tools = { version, pgDump: path.join(dir, 'bin', 'pg_dump'), pgRestore: path.join(dir, 'bin', 'pg_restore'), psql: path.join(dir, 'bin', 'psql') };
  for (const file of [tools.pgDump, tools.pgRestore, tools.psql]) {
    if (!(await access(file, constants.X_OK).then(() => true, () => false))) return undefined;
  }
  return tools;
}

/** 501 not-available: this installation cannot dump or restore postgres until the set-up script ran. */
export function pgClientMissing(toolsDir: string): Problem {
  return problem(
    'not-available',
    501,
    `This installation has no PostgreSQL client tools to dump or restore managed postgres services (looked in ${pgClientDir(toolsDir)}). An operator runs scripts/setup-pg-client.sh to install them.`,
  );
}

import pg from 'pg';
import { startEmbeddedDatabase } from './embedded.ts';
import { migrate } from './migrate.ts';
import { parseTimestamptz } from './timestamps.ts';

// int8 ids are within 2^53 for any installation; hand them out as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// timestamptz read by position (the general parser cost more than the rest of a row of a list page).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

export type Queryable = pg.Pool | pg.PoolClient;

export interface Database {
  pool: pg.Pool;
  /** Connection string in use (for the event listener's own connection). */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  log: (message: string) => void;
  poolSize?: number;
}

/** Connects to DATABASE_URL, or starts the embedded PostgreSQL; then applies pending migrations. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const embedded = options.databaseUrl ? undefined : await startEmbeddedDatabase(options.dataDir, options.log);
  const url = options.databaseUrl ?? embedded!.url;
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 20 });
  pool.on('error', (error) => options.log(`database pool: ${error.message}`));
  try {
    const applied = await migrate(pool);
    if (applied.length > 0) options.log(`applied migrations: ${applied.join(', ')}`);
  } catch (error) {
    await pool.end();
    await embedded?.stop();
    throw error;
  }
  return {
    pool,
    url,
    embedded: embedded !== undefined,
    async close() {
      await pool.end();
      await embedded?.stop();
    },
  };
}

export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** PostgreSQL's unique_violation, for turning races on unique names into 409s. */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505';
}

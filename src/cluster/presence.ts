// Which svc servers of the installation are alive, and who this one is. Every server holds a PostgreSQL advisory
// lock on a numbered slot for as long as it runs, on a connection of its own: the lock goes with the server's
// session (a killed server loses it within moments), so the locks held are exactly the servers alive. The slot
// also names the server: slot 0 is the `server-id` of the data directory as before, slot n is `<server-id>.<n>`.
// Several servers on one data directory thus get distinct ids, and a restarted server takes the lowest free slot
// (its own, when it was the only one that stopped) and resumes the jobs it left at once. See docs/topology.md.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Queryable } from '../store/database.ts';

/** The first key of the slots' advisory locks ('svcs'); the second is the slot number. */
export const SLOT_LOCK_CLASS = 0x73766373;
const RECLAIM_MS = 1000;

/** The id kept in the data directory (made once). */
export async function dataDirServerId(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'server-id');
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  if (existing?.trim()) return existing.trim();
  // `wx`: two servers starting together on a new data directory agree on the file the first one wrote
  await writeFile(file, `${randomUUID()}\n`, { flag: 'wx' }).catch(() => undefined);
  return (await readFile(file, 'utf8')).trim();
}

export const serverIdOf = (baseId: string, slot: number) => (slot === 0 ? baseId : `${baseId}.${slot}`);

/** The ids of the servers alive (each holds its slot's lock and wrote its row), lowest slot first. */
export async function liveServerIds(db: Queryable): Promise<string[]> {
  const slots = await liveSlots(db);
  const result = await db.query<{ server_id: string }>('SELECT server_id FROM servers WHERE slot = ANY($1) ORDER BY slot', [slots]);
  return result.rows.map((r) => r.server_id);
}

/** The slots whose lock a live server holds, in this database. */
export async function liveSlots(db: Queryable): Promise<number[]> {
  const result = await db.query<{ slot: number }>(
    `SELECT objid::int AS slot FROM pg_locks
     WHERE locktype = 'advisory' AND classid = $1 AND objsubid = 2 AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
     ORDER BY 1`,
    [SLOT_LOCK_CLASS],
  );
  return result.rows.map((r) => r.slot);
}

export class ServerPresence {
  private closed = false;
  private retry?: NodeJS.Timeout;

  private constructor(
    private client: pg.Client,
    private readonly databaseUrl: string,
    readonly slot: number,
    readonly serverId: string,
    private readonly log: (message: string) => void,
  ) {
    this.watch(client);
  }

  /** Takes the lowest free slot. */
  static async claim(options: { databaseUrl: string; dataDir: string; log: (message: string) => void }): Promise<ServerPresence> {
    const baseId = await dataDirServerId(options.dataDir);
    const client = await connect(options.databaseUrl);
    try {
      for (let slot = 0; ; slot++) {
        if (!(await tryLock(client, slot))) continue;
        const serverId = serverIdOf(baseId, slot);
        await client.query(
          `INSERT INTO servers (slot, server_id, started_at) VALUES ($1, $2, now())
           ON CONFLICT (slot) DO UPDATE SET server_id = EXCLUDED.server_id, started_at = EXCLUDED.started_at`,
          [slot, serverId],
        );
        return new ServerPresence(client, options.databaseUrl, slot, serverId, options.log);
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  private watch(client: pg.Client): void {
    const lost = (error: Error) => {
      if (this.closed || client !== this.client) return;
      this.log(`presence: the connection holding slot ${this.slot} was lost (${error.message}); taking it again`);
      client.end().catch(() => undefined);
      this.reclaim();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
  }

  /** Takes the same slot again after a lost connection; another server cannot have it unless it started meanwhile. */
  private reclaim(): void {
    this.retry = setTimeout(async () => {
      if (this.closed) return;
      try {
        const client = await connect(this.databaseUrl);
        if (await tryLock(client, this.slot)) {
          this.client = client;
          this.watch(client);
          this.log(`presence: slot ${this.slot} held again`);
          return;
        }
        await client.end();
        this.log(`presence: slot ${this.slot} was taken by a server that started meanwhile; two servers now share the id ${this.serverId}: restart this one`);
      } catch (error) {
        this.log(`presence: ${(error as Error).message}`);
        this.reclaim();
      }
    }, RECLAIM_MS);
    this.retry.unref();
  }

  liveSlots(db: Queryable): Promise<number[]> {
    return liveSlots(db);
  }

  liveServerIds(db: Queryable): Promise<string[]> {
    return liveServerIds(db);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.client.end().catch(() => undefined);
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'svc presence' });
  await client.connect();
  return client;
}

async function tryLock(client: pg.Client, slot: number): Promise<boolean> {
  const result = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [SLOT_LOCK_CLASS, slot]);
  return result.rows[0].locked;
}

import { randomToken } from '../core/secrets.ts';
import type { Queryable } from './database.ts';

/** A secret created once per installation and shared by every server of it (cursor signatures, ...). */
export async function installationSecret(db: Queryable, name: string): Promise<string> {
  await db.query('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [name, randomToken(32)]);
  return (await db.query<{ value: string }>('SELECT value FROM settings WHERE key = $1', [name])).rows[0].value;
}

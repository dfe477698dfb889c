// `svc admin ...`: operator commands run on the server's machine, against the installation's database.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createSignInLink } from '../auth/sessions.ts';
import { systemClock } from '../core/clock.ts';
import { ConfigError, parseFlags } from '../core/config.ts';
import { serverInfoFile } from '../server.ts';
import { openDatabase, type Database } from '../store/database.ts';
import { findUserByEmail, findUserById } from '../store/users.ts';
import { mailStateText } from '../mail/delivery.ts';
import { mailSignInLink } from '../people/sign-in-mail.ts';
import type { CommandIo } from './main.ts';

interface ServerInfo {
  pid: number;
  url: string;
  database_url: string;
  /** Whether it sends mail (--smtp-url). */
  mail?: boolean;
}

async function readServerInfo(dataDir: string): Promise<ServerInfo | undefined> {
  try {
    const info = JSON.parse(await readFile(serverInfoFile(dataDir), 'utf8')) as ServerInfo;
    process.kill(info.pid, 0); // throws when that server is gone
    return info;
  } catch {
    return undefined;
  }
}

/** The running server's database, DATABASE_URL, or the embedded one started just for this command. */
async function installationDatabase(dataDir: string, databaseUrl: string | undefined, info: ServerInfo | undefined): Promise<Database> {
  const url = databaseUrl ?? info?.database_url;
  if (url === undefined && !existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))) {
    throw new ConfigError(`no svc installation in ${dataDir}; start it with "svc server" or pass --data-dir`);
  }
  return openDatabase({ databaseUrl: url, dataDir, log: () => undefined, poolSize: 2 });
}

async function signInLink(argv: string[], io: CommandIo): Promise<number> {
  const mail = argv.includes('--mail');
  const flags = parseFlags(argv.filter((a) => a !== '--mail'), ['--user', '--data-dir', '--base-url']);
  const dataDir = path.resolve(io.cwd, flags.get('--data-dir') ?? process.env.SVC_DATA_DIR ?? '.svc');
  const info = await readServerInfo(dataDir);
  // The running server sends the outbox; without one that has a mail server the link would sit there unsent.
  if (mail && !info?.mail) {
    io.stderr(`svc admin: not sent: ${info ? 'no mail server configured (svc server --smtp-url)' : `no running server in ${dataDir} to send it`}; leave out --mail to print the link\n`);
    return 1;
  }
  const database = await installationDatabase(dataDir, process.env.DATABASE_URL || undefined, info);
  try {
    const email = flags.get('--user');
    const user = email
      ? await findUserByEmail(database.pool, email)
      : (await database.pool.query<{ id: number }>('SELECT id FROM users WHERE is_admin ORDER BY id LIMIT 1')).rows[0];
    if (!user) {
      io.stderr(email ? `svc admin: no user with the e-mail ${email}\n` : 'svc admin: no administrator yet; start the server once\n');
      return 1;
    }
    const baseUrl = flags.get('--base-url') ?? process.env.SVC_BASE_URL ?? info?.url ?? 'http://127.0.0.1:8080';
    const minutes = Number(process.env.SVC_SIGN_IN_LINK_MINUTES) || 15;
    const link = { userId: user.id, createdBy: null, baseUrl: baseUrl.replace(/\/+$/, ''), minutes, now: systemClock.now() };
    if (!mail) {
      io.stdout(`${(await createSignInLink(database.pool, link)).url}\n`);
      return 0;
    }
    const recipient = (await findUserById(database.pool, user.id))!.email;
    const queued = (await mailSignInLink(database.pool, { ...link, recipient })).mail;
    const state = mailStateText({ state: queued.state, lastError: queued.last_error, nextAttemptAt: queued.next_attempt_at, attempts: queued.attempts });
    io.stdout(`A sign-in link for ${recipient} is queued for mail (${queued.id}); mail state: ${state}. The running server sends it.\n`);
    return 0;
  } finally {
    await database.close();
  }
}

export async function adminCommand(argv: string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === 'sign-in-link') return await signInLink(rest, io);
    io.stderr('Usage: svc admin sign-in-link [--user EMAIL] [--mail] [--data-dir DIR] [--base-url URL]\n');
    return 2;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(`svc admin: ${error.message}\n`);
    return 2;
  }
}

// `svc login`, `svc logout`, `svc whoami`. The browser login: a listener on 127.0.0.1 with a random state, the
// console's /cli-login page (src/api/cli-login-page.ts) mints a key with source `cli` using the browser session
// and posts it back to the listener; the state proves the answer belongs to this command.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Api, normalizeUrl } from './api.ts';
import { openInBrowser } from './browser.ts';
import type { Cli, Command } from './command.ts';
import { readLogin, removeLogin, writeLogin, type StoredLogin } from './config.ts';
import { CliError, ExitCode, notSignedIn, unreachable, usageError } from './errors.ts';

const LOGIN_TIMEOUT_MS = 10 * 60_000;
const tokenPattern = /^svc_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_[A-Za-z0-9_-]+$/;

interface Handback {
  token: string;
  keyId: string;
}

const page = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} · svc</title></head>` +
  `<body style="font:15px system-ui,sans-serif;max-width:560px;margin:64px auto"><h1 style="font-size:22px">${title}</h1><p>${text}</p></body></html>`;

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

async function readForm(request: http.IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of request) {
    body += chunk;
    if (body.length > 16_384) throw new Error('body too large');
  }
  if (/json/.test(request.headers['content-type'] ?? '')) return new URLSearchParams(JSON.parse(body) as Record<string, string>);
  return new URLSearchParams(body);
}

/** Listens on 127.0.0.1, opens the console's /cli-login page, and waits for the key it posts back. */
async function keyFromBrowser(cli: Cli, url: string): Promise<Handback> {
  const anonymous = new Api(url, undefined, (text) => cli.note(text));
  await anonymous.answer(anonymous.client.GET('/api/v1/version'));
  const state = randomBytes(24).toString('base64url');
  let settle!: { resolve: (h: Handback) => void; reject: (e: Error) => void };
  const answered = new Promise<Handback>((resolve, reject) => (settle = { resolve, reject }));
  const listener = http.createServer((request, response) => {
    const reply = (status: number, title: string, text: string) =>
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }).end(page(title, text));
    if (request.method !== 'POST' || request.url !== '/callback') return reply(404, 'Not found', 'Nothing here.');
    readForm(request).then((form) => {
      if (!sameSecret(form.get('state') ?? '', state)) {
        return reply(400, 'Not this sign-in', 'This answer does not belong to the waiting command. Start again with <code>svc login</code>.');
      }
      if (form.get('error')) {
        // Settled once the page is on its way, so closing the listener cannot cut it off.
        response.once('finish', () => settle.reject(notSignedIn('the sign-in was cancelled in the browser')));
        return reply(200, 'Sign-in cancelled', 'The command line was not allowed. You can close this tab.');
      }
      const token = form.get('token') ?? '';
      const keyId = form.get('key_id') ?? tokenPattern.exec(token)?.[1] ?? '';
      if (!tokenPattern.test(token)) return reply(400, 'No key', 'The answer carried no API key.');
      response.once('finish', () => settle.resolve({ token, keyId }));
      reply(200, 'Signed in', 'The command line is signed in. You can close this tab and go back to the terminal.');
    }, () => reply(400, 'Bad request', 'The answer could not be read.'));
  });
  await new Promise<void>((resolve, reject) => listener.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  const address = `${url}/cli-login?${new URLSearchParams({ port: String(port), state, host: os.hostname() })}`;
  const tell = cli.json ? (text: string) => cli.note(text) : (text: string) => cli.say(text);
  const opened = openInBrowser(address, cli.env);
  tell(`${opened ? 'Opening your browser to sign in' : 'Open this address in a browser on this machine to sign in'} to ${url}:\n  ${address}\n`);
  tell(`Waiting for the browser (port ${port} on 127.0.0.1). On a machine without a browser: svc login ${url} --token svc_...\n`);
  const timer = setTimeout(() => settle.reject(notSignedIn('no answer from the browser within 10 minutes')), LOGIN_TIMEOUT_MS);
  try {
    return await answered;
  } finally {
    clearTimeout(timer);
    listener.close();
    listener.closeAllConnections();
  }
}

/** The previous key of `svc login` on the same server stops working, so logins do not pile up live keys. */
async function retire(previous: StoredLogin | undefined, url: string, keyId: string): Promise<void> {
  if (!previous || previous.url !== url || previous.key_id === keyId) return;
  const api = new Api(previous.url, previous.token, () => undefined);
  try {
    const path = { key: previous.key_id };
    const key = await api.answer(api.client.GET('/api/v1/me/api-keys/{key}', { params: { path } }));
    if (key.source === 'cli') await api.answer(api.client.DELETE('/api/v1/me/api-keys/{key}', { params: { path } }));
  } catch {
    // Already gone or unreachable: nothing to retire.
  }
}

export const loginCommand: Command = {
  usage: `svc login [URL] [--token svc_...] [--json]
  Signs in through the browser: the console asks you to allow the command line, then hands it a key (source cli).
  URL defaults to SVC_URL, then the address signed in to before, then http://127.0.0.1:8080.
  --token KEY   use an existing API key instead (also SVC_TOKEN), for scripts and machines without a browser`,
  options: { token: { type: 'string' } },
  positionals: [0, 1],
  async run(cli) {
    const previous = await readLogin(cli.env);
    const url = normalizeUrl(cli.args.positionals[0] ?? cli.env.SVC_URL ?? previous?.url ?? 'http://127.0.0.1:8080');
    const given = cli.args.string('token') ?? cli.env.SVC_TOKEN;
    if (given !== undefined && !tokenPattern.test(given)) throw usageError('--token takes an API key: svc_<id>_<secret>');
    const { token, keyId } = given ? { token: given, keyId: tokenPattern.exec(given)![1] } : await keyFromBrowser(cli, url);
    const signedIn = new Api(url, token, (text) => cli.note(text));
    const me = await signedIn.answer(signedIn.client.GET('/api/v1/me'));
    const file = await writeLogin(cli.env, { url, token, key_id: keyId });
    await retire(previous, url, keyId);
    if (cli.json) cli.print({ url, key_id: keyId, config: file, user: me });
    else cli.say(`Signed in to ${url} as ${me.name} <${me.email}>.\nThe key is stored in ${file}.\n`);
  },
};

export const logoutCommand: Command = {
  usage: `svc logout [--local] [--json]
  Deletes the stored key on the server and forgets it here.
  --local   only forget it here (when the server cannot be reached; the key keeps working until deleted)`,
  options: { local: { type: 'boolean' } },
  async run(cli) {
    const stored = await readLogin(cli.env);
    if (!stored) {
      if (cli.json) cli.print({ signed_in: false });
      else cli.say('Not signed in.\n');
      return;
    }
    let deleted = false;
    if (!cli.args.flag('local')) {
      try {
        const api = new Api(stored.url, stored.token, (text) => cli.note(text));
        await api.answer(api.client.DELETE('/api/v1/me/api-keys/{key}', { params: { path: { key: stored.key_id } } }));
        deleted = true;
      } catch (error) {
        if (!(error instanceof CliError)) throw error;
        if (error.exitCode === ExitCode.unreachable) throw unreachable(`${error.message}; nothing changed (svc logout --local forgets the key here only)`);
        // 401 or 404: the key was deleted already.
        if (error.exitCode !== ExitCode.notSignedIn && error.problem?.status !== 404) throw error;
      }
    }
    await removeLogin(cli.env);
    if (cli.json) cli.print({ url: stored.url, key_id: stored.key_id, key_deleted: deleted, signed_in: false });
    else cli.say(`Signed out of ${stored.url}${deleted ? '; the key is deleted' : cli.args.flag('local') ? '; the key still works until deleted in the console' : ''}.\n`);
  },
};

export const whoamiCommand: Command = {
  usage: 'svc whoami [--json]\n  Shows who the stored key (or SVC_TOKEN) acts as.',
  async run(cli) {
    const api = await cli.api();
    const me = await api.answer(api.client.GET('/api/v1/me'));
    if (cli.json) cli.print({ url: api.url, user: me });
    else cli.say(`${me.name} <${me.email}> on ${api.url}\n`);
  },
};

// `svc login`, `logout`, `whoami`, `keys` and the exit statuses, as real processes against a real server: a key
// given with --token, and the browser flow with this test acting as the browser (the admin's session cookie).
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createPerson, type ApiClient } from './helpers/client.ts';
import { runSvc, startSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let person: { session: ApiClient; key: ApiClient; id: number };
let home: string;
let configHome: string;

/** A clean environment: its own config directory, none of the caller's SVC_* settings. */
function env(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { XDG_CONFIG_HOME: configHome, SVC_TOKEN: undefined, SVC_URL: undefined, SVC_WORKSPACE: undefined, SVC_TEAM: undefined, SVC_BROWSER: 'true', ...extra };
}
const svc = (args: string[], extra: Record<string, string> = {}) => runSvc(args, env(extra));
const configPath = () => path.join(configHome, 'svc', 'config.json');
const readConfig = async () => JSON.parse(await readFile(configPath(), 'utf8')) as { url: string; token: string; key_id: string };

before(async () => {
  server = await startTestServer();
  person = await createPerson(server.admin, 'cli-login@example.com');
  home = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-login-'));
});

after(async () => {
  await server?.close();
  await rm(home, { recursive: true, force: true });
});

let counter = 0;
const freshConfig = async () => (configHome = await mkdtemp(path.join(home, `config-${++counter}-`)));

test('login --token stores url, token and key id in a 0600 file in a 0700 directory; ws list and whoami work', async () => {
  await freshConfig();
  const token = person.key.auth.token!;
  const login = await svc(['login', server.url, '--token', token]);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, /^Signed in to http:\/\/127\.0\.0\.1:\d+ as cli-login <cli-login@example\.com>\.\n/);
  assert.equal((await stat(configPath())).mode & 0o777, 0o600);
  assert.equal((await stat(path.dirname(configPath()))).mode & 0o777, 0o700);
  const stored = await readConfig();
  assert.deepEqual(stored, { url: server.url, token, key_id: token.split('_')[1] });

  const list = await svc(['ws', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^No workspaces yet/);
  const who = await svc(['whoami', '--json']);
  assert.equal(who.code, 0, who.stderr);
  assert.equal(JSON.parse(who.stdout).user.email, 'cli-login@example.com');
  assert.equal(who.stderr, '', 'the same version: no warning');
});

test('--json output parses; SVC_URL and SVC_TOKEN work without a stored login', async () => {
  await freshConfig();
  const auth = { SVC_URL: server.url, SVC_TOKEN: person.key.auth.token! };
  const list = await svc(['ws', 'list', '--json'], auth);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout), []);
  const keys = await svc(['keys', 'list', '--json'], auth);
  assert.equal(keys.code, 0, keys.stderr);
  assert.ok(JSON.parse(keys.stdout).some((k: { source: string }) => k.source === 'console'));
  // a broken login file does not matter while SVC_URL and SVC_TOKEN say everything; without them it is named
  await mkdir(path.dirname(configPath()), { recursive: true });
  await writeFile(configPath(), '{"url": "http://x', { mode: 0o600 });
  assert.equal((await svc(['ws', 'list', '--json'], auth)).code, 0);
  const broken = await svc(['ws', 'list']);
  assert.equal(broken.code, 3);
  assert.equal(broken.stderr, `svc: the login file ${configPath()} is not JSON: run "svc login URL" again (or set SVC_URL and SVC_TOKEN)\n`);
});

test('a problem prints title: detail and each error position, and exits 1', async () => {
  await freshConfig();
  const auth = { SVC_URL: server.url, SVC_TOKEN: server.admin.auth.token! };
  const missing = await svc(['ws', 'show', '987654'], auth);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^Not found: .+\n$/);
  const org = (await server.admin.post('/orgs', { name: 'Login' })).body.id;
  const team = (await server.admin.post('/teams', { org_id: org, name: 'Login team' })).body.id;
  const bad = await svc(['ws', 'create', 'Not_A_Name', '--team', String(team), '--json'], auth);
  assert.equal(bad.code, 1);
  assert.equal(bad.stderr, 'Invalid input\n  /name: must have only lowercase letters, digits and dashes, and start and end with a letter or digit\n');
  assert.equal(JSON.parse(bad.stdout).problem.type, 'urn:svc:problem:validation');
});

test('not signed in exits 3; a deleted key exits 3; usage errors exit 2', async () => {
  await freshConfig();
  const none = await svc(['ws', 'list']);
  assert.equal(none.code, 3);
  assert.match(none.stderr, /not signed in: run "svc login URL" first/);
  const doomed = await person.session.mintKey('doomed');
  await person.session.delete(`/me/api-keys/${doomed.auth.token!.split('_')[1]}`);
  const deleted = await svc(['ws', 'list'], { SVC_URL: server.url, SVC_TOKEN: doomed.auth.token! });
  assert.equal(deleted.code, 3);
  assert.match(deleted.stderr, /^Authentication required/);
  const usage = await svc(['ws', 'list', '--bogus']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /Unknown option '--bogus'[\s\S]*Usage: svc ws list/);
  assert.equal((await svc(['ws'])).code, 2);
  const typo = await svc(['ws', 'lst']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /^svc ws: unknown command "lst"\. Did you mean "list"\?\n/);
  const command = await svc(['servce']);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /^svc: unknown command "servce"\. Did you mean "service"\?\n/);
  assert.equal((await svc(['login', server.url, '--token', 'nope'])).code, 2);
});

test('a server that cannot be reached exits 4', async () => {
  await freshConfig();
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const list = await svc(['ws', 'list'], { SVC_URL: url, SVC_TOKEN: person.key.auth.token! });
  assert.equal(list.code, 4);
  assert.match(list.stderr, /could not reach the server at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  assert.equal((await svc(['login', url, '--token', person.key.auth.token!])).code, 4);
  assert.equal((await svc(['login', url])).code, 4);
});

/** A server at the address that is not svc: a web page for every path, or another API's JSON. */
async function otherServer(answer: { status: number; type: string; body: string }): Promise<{ url: string; close: () => void }> {
  const other = http.createServer((_request, response) => response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(other.address() as AddressInfo).port}`, close: () => other.close() };
}

test('a server that is not svc is refused in one line with what it answered, never its page; exit 4', async () => {
  await freshConfig();
  const page = await otherServer({ status: 200, type: 'text/html; charset=utf-8', body: '<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>' });
  const api = await otherServer({ status: 404, type: 'application/json', body: '{"error":"no such thing"}' });
  try {
    const browser = await svc(['login', page.url]);
    assert.equal(browser.code, 4);
    assert.equal(browser.stderr, `svc: ${page.url} is not an svc server: it answered 200 text/html to GET /api/v1/version\n`);
    const token = await svc(['login', page.url, '--token', person.key.auth.token!]);
    assert.equal(token.code, 4);
    assert.equal(token.stderr, `svc: ${page.url} is not an svc server: it answered 200 text/html to GET /api/v1/me\n`);
    await assert.rejects(stat(configPath()), 'nothing stored');
    const list = await svc(['ws', 'list', '--json'], { SVC_URL: api.url, SVC_TOKEN: person.key.auth.token! });
    assert.equal(list.code, 4);
    assert.match(list.stderr, /^svc: http:\/\/127\.0\.0\.1:\d+ is not an svc server: it answered 404 application\/json to GET \/api\/v1\/\w+\n$/);
    assert.equal(JSON.parse(list.stdout).exit_code, 4);
    const json = await svc(['login', api.url]);
    assert.equal(json.stderr, `svc: ${api.url} is not an svc server: it answered 404 application/json to GET /api/v1/version\n`);
  } finally {
    page.close();
    api.close();
  }
});

test('warns once on stderr when the server runs another major or minor version', async () => {
  await freshConfig();
  const fake = http.createServer((request, response) => {
    const body = request.url?.startsWith('/api/v1/teams') ? { items: [] } : { items: [] };
    response.writeHead(200, { 'content-type': 'application/json', 'svc-version': '9.1.0' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const list = await svc(['ws', 'list'], { SVC_URL: url, SVC_TOKEN: person.key.auth.token! });
    assert.equal(list.code, 0, list.stderr);
    assert.equal(list.stderr.match(/warning: this svc is 1\.5\.0 but the server at .* runs 9\.1\.0/g)?.length, 1, list.stderr);
  } finally {
    fake.close();
  }
});

test('login through the browser: the page, a cli key minted with the session, the callback with the state', async () => {
  await freshConfig();
  const login = startSvc(['login', server.url], env());
  try {
    const [address] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/cli-login\?\S+/);
    const query = new URL(address).searchParams;
    const port = query.get('port')!;
    const host = query.get('host')!;
    assert.equal(host, os.hostname());

    // The browser without a session is sent to sign in by the page's script; with the admin's cookie it asks.
    const cookie = `__Host-svc_session=${server.adminSession.auth.cookie}`;
    const page = await fetch(address, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy')!, /form-action http:\/\/127\.0\.0\.1:\*/);
    const html = await page.text();
    assert.match(html, /'Allow the command line on ' \+ host \+ ' to act as '/);
    assert.match(html, /\/sign-in\?return=/);

    // What the page's script does on Allow: mint a key with source cli, then post it back with the state.
    const minted = await server.adminSession.post('/me/api-keys', { name: `svc CLI on ${host}`, source: 'cli' });
    assert.equal(minted.status, 201, minted.text);
    const callback = `http://127.0.0.1:${port}/callback`;
    const form = (fields: Record<string, string>) => fetch(callback, { method: 'POST', body: new URLSearchParams(fields) });
    const wrong = await form({ state: 'x'.repeat(32), token: minted.body.token, key_id: minted.body.id });
    assert.equal(wrong.status, 400, 'another state is refused and the command keeps waiting');
    const right = await form({ state: query.get('state')!, token: minted.body.token, key_id: minted.body.id });
    assert.equal(right.status, 200);
    assert.match(await right.text(), /You can close this tab/);

    assert.equal(await login.exited, 0, login.stderr());
    assert.match(login.stdout(), /Signed in to http:\/\/127\.0\.0\.1:\d+ as Administrator <admin@localhost>\./);
    const stored = await readConfig();
    assert.deepEqual(stored, { url: server.url, token: minted.body.token, key_id: minted.body.id });
    assert.equal((await server.admin.get(`/me/api-keys/${minted.body.id}`)).body.source, 'cli');
  } finally {
    login.child.kill('SIGKILL');
  }
});

test('cancelling in the browser exits 3 and stores nothing', async () => {
  await freshConfig();
  const login = startSvc(['login', server.url], env());
  try {
    const [address] = await login.waitFor(/http:\/\/127\.0\.0\.1:\d+\/cli-login\?\S+/);
    const query = new URL(address).searchParams;
    const answer = await fetch(`http://127.0.0.1:${query.get('port')}/callback`, { method: 'POST', body: new URLSearchParams({ state: query.get('state')!, error: 'denied' }) });
    assert.equal(answer.status, 200);
    assert.equal(await login.exited, 3);
    assert.match(login.stderr(), /the sign-in was cancelled in the browser/);
    await assert.rejects(stat(configPath()));
  } finally {
    login.child.kill('SIGKILL');
  }
});

test('logout deletes the key on the server and the local config; a second logout has nothing to do', async () => {
  await freshConfig();
  const key = await person.session.mintKey('for logout');
  assert.equal((await svc(['login', server.url, '--token', key.auth.token!])).code, 0);
  const out = await svc(['logout']);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /Signed out of .*; the key is deleted\./);
  assert.equal((await key.get('/me')).status, 401);
  await assert.rejects(stat(configPath()));
  const again = await svc(['logout', '--json']);
  assert.equal(again.code, 0);
  assert.deepEqual(JSON.parse(again.stdout), { signed_in: false });
});

test('keys list marks the key in use; keys rm by id prefix deletes it, and deleting the own key signs out', async () => {
  await freshConfig();
  const other = await person.session.mintKey('other key');
  const otherId = other.auth.token!.split('_')[1];
  const mine = await person.session.mintKey('mine');
  assert.equal((await svc(['login', server.url, '--token', mine.auth.token!])).code, 0);
  const list = await svc(['keys', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^\*\s+\S+\s+mine\s+console/m);
  assert.equal((await svc(['keys', 'rm', otherId.slice(0, 8)])).code, 0);
  assert.equal((await other.get('/me')).status, 401);
  const own = await svc(['keys', 'rm', mine.auth.token!.split('_')[1]]);
  assert.equal(own.code, 0, own.stderr);
  assert.match(own.stdout, /signed out/);
  assert.equal((await svc(['whoami'])).code, 3);
});

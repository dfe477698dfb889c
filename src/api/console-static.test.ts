import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Fastify from 'fastify';
import { CONSOLE_CSP, registerConsoleApp } from './console-static.ts';

let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-console-'));
  await mkdir(path.join(dir, 'assets'));
  await writeFile(path.join(dir, 'index.html'), '<!doctype html><script type="module" src="/assets/index-abc.js"></script>');
  await writeFile(path.join(dir, 'assets', 'index-abc.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  await writeFile(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});

after(() => rm(dir, { recursive: true, force: true }));

async function appWith(build: string, routes: (app: ReturnType<typeof Fastify>) => void = () => undefined) {
  const app = Fastify();
  routes(app);
  const logged: string[] = [];
  const served = registerConsoleApp(app, { dir: build, log: (m) => logged.push(m) });
  await app.ready();
  return { app, served, logged };
}

test('without a build nothing is registered and the log says how to build it', async () => {
  const { app, served, logged } = await appWith(path.join(dir, 'missing'));
  assert.equal(served, false);
  assert.match(logged[0], /npm run console:build/);
  assert.equal((await app.inject({ url: '/' })).statusCode, 404);
  await app.close();
});

test('client routes answer index.html with no-store and the CSP; server routes and /api paths are not shadowed', async () => {
  const { app, served } = await appWith(dir, (a) => a.get('/cli-login', async () => 'the CLI page'));
  assert.equal(served, true);
  for (const url of ['/', '/workspaces/12?tab=stages', '/sign-in', '/workspace-sign-in?host=w1.localhost&next=%2F']) {
    const page = await app.inject({ url });
    assert.equal(page.statusCode, 200, url);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.equal(page.headers['content-security-policy'], CONSOLE_CSP);
    assert.match(page.body, /index-abc\.js/);
  }
  assert.equal((await app.inject({ url: '/cli-login' })).body, 'the CLI page');
  assert.equal((await app.inject({ url: '/api/v1/nowhere' })).statusCode, 404);
  assert.equal((await app.inject({ url: '/assets/index-gone.js' })).statusCode, 404);
  assert.equal((await app.inject({ method: 'POST', url: '/workspaces' })).statusCode, 404);
  await app.close();
});

test('hashed assets are cached for a year and sent gzipped when accepted; other files are revalidated', async () => {
  const { app } = await appWith(dir);
  const plain = await app.inject({ url: '/assets/index-abc.js' });
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(plain.headers['content-encoding'], undefined);
  const zipped = await app.inject({ url: '/assets/index-abc.js', headers: { 'accept-encoding': 'gzip, br' } });
  assert.equal(zipped.headers['content-encoding'], 'gzip');
  assert.equal(zipped.headers.vary, 'accept-encoding');
  assert.ok(zipped.rawPayload.length < plain.rawPayload.length);
  const icon = await app.inject({ url: '/favicon.svg' });
  assert.equal(icon.headers['content-type'], 'image/svg+xml');
  assert.equal(icon.headers['cache-control'], 'no-cache');
  await app.close();
});

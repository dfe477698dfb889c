// The embedded default, end to end as a user meets it: start without DATABASE_URL, sign in with the printed
// link, mint a key, call the API, stop with SIGTERM; then `svc admin sign-in-link` while the server is down.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApiClient } from '../test/helpers/client.ts';
import { runSvc, startSvc } from '../test/helpers/process.ts';

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'svc-smoke-'));
const env = { DATABASE_URL: undefined };
const server = startSvc(['server', '--listen', '127.0.0.1:0', '--data-dir', dataDir], env);
try {
  const [, url] = await server.waitFor(/listening on (\S+)\n/, 120_000);
  const [, link] = await server.waitFor(/^\s+(http\S+#token=\S+)$/m);
  assert.match(server.stdout(), /Database: embedded/);
  const admin = await new ApiClient(url).signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await admin.mintKey('smoke');
  const me = await key.get('/me');
  assert.equal(me.status, 200, me.text);
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, server.stderr());
  const printed = await runSvc(['admin', 'sign-in-link', '--data-dir', dataDir], env);
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(printed.stdout, /^http\S+\/sign-in#token=\S+\n$/);
  console.log(`embedded default: started, signed in as ${me.body.email}, stopped, sign-in link printed offline`);
} finally {
  server.child.kill('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
}

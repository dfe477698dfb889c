// The installation's wildcard certificate as svc reads it at start (src/domains/wildcard.ts): checked like an
// uploaded certificate, with the names it covers; what is wrong with it is said (svc then does not start).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadWildcardCertificate } from '../src/domains/wildcard.ts';
import { madeCertificate, type MadeCertificate } from './helpers/certificates.ts';

let dir: string;
let wildcard: MadeCertificate;
let other: MadeCertificate;
const file = async (name: string, text: string) => {
  await writeFile(path.join(dir, name), text);
  return path.join(dir, name);
};

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-wildcard-load-'));
  wildcard = await madeCertificate(dir, ['*.apps.test', 'apps.test']);
  other = await madeCertificate(dir, ['other.test']);
});
after(() => rm(dir, { recursive: true, force: true }));

test('a good wildcard certificate covers one label under its names, and its exact names', async () => {
  const loaded = await loadWildcardCertificate(await file('w.pem', wildcard.certificate), await file('w.key', wildcard.key), new Date(Date.now() + 60_000));
  assert.deepEqual(loaded.names, ['*.apps.test', 'apps.test']);
  assert.equal(loaded.covers('w12.apps.test'), true);
  assert.equal(loaded.covers('apps.test'), true);
  assert.equal(loaded.covers('a.b.apps.test'), false);
  assert.equal(loaded.covers('shop.test'), false);
});

test('a key that does not match, an expired certificate or a missing file is refused saying why', async () => {
  const certificate = await file('w.pem', wildcard.certificate);
  await assert.rejects(loadWildcardCertificate(certificate, await file('o.key', other.key), new Date(Date.now() + 60_000)), /the key does not match the certificate/);
  await assert.rejects(loadWildcardCertificate(certificate, await file('w.key', wildcard.key), new Date(Date.now() + 11 * 86_400_000)), /expired at/);
  await assert.rejects(loadWildcardCertificate(path.join(dir, 'missing.pem'), await file('w.key', wildcard.key), new Date()), /--tls-wildcard-cert: cannot read/);
});

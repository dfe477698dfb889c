import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { renderHostsFile, writeInPlace } from './hosts-file.ts';

test('the hosts file keeps localhost and lists each service name with its replicas\' addresses, sorted', () => {
  const text = renderHostsFile(7, [
    { name: 'web', address: '10.214.0.5' },
    { name: 'api', address: '10.214.0.10' },
    { name: 'api', address: '10.214.0.9' },
    { name: 'api', address: '10.214.0.9' },
  ]);
  assert.equal(
    text,
    '# The services of workspace 7, written by svc\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' +
      '10.214.0.9\tapi\n10.214.0.10\tapi\n10.214.0.5\tweb\n',
  );
});

test('the file is rewritten in place: same inode, shorter text leaves nothing behind', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-hosts-'));
  try {
    const file = path.join(dir, 'hosts');
    await writeInPlace(file, 'a long first text\n');
    const inode = (await stat(file)).ino;
    await writeInPlace(file, 'short\n');
    assert.equal(await readFile(file, 'utf8'), 'short\n');
    assert.equal((await stat(file)).ino, inode);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

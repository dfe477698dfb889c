import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { create } from 'tar';
import { LayerError, unpackLayer } from './layer-unpack.ts';

let scratch: string;
let layer: Buffer;

before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-layer-unpack-'));
  const source = path.join(scratch, 'source');
  await mkdir(path.join(source, 'bin'), { recursive: true });
  for (let i = 0; i < 300; i++) await writeFile(path.join(source, 'bin', `tool-${i}`), `#!/bin/sh\necho ${i}\n`.repeat(i % 7 + 1));
  await writeFile(path.join(source, 'bin', 'suid'), 'x');
  await chmod(path.join(source, 'bin', 'suid'), 0o4755);
  await writeFile(path.join(source, 'big'), Buffer.alloc(300_000, 7));
  layer = await streamBytes(create({ cwd: source, gzip: false, portable: true }, ['bin', 'big']) as unknown as Readable);
});

after(async () => rm(scratch, { recursive: true, force: true }));

async function streamBytes(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const fresh = () => mkdtemp(path.join(scratch, 'out-'));
/** A stream of `bytes` in pieces of `size`, as a registry's answer arrives. */
const pieces = (bytes: Buffer, size = 10_000) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));

test('a gzip layer unpacks whole, in pieces of any size; set-uid bits are dropped', async () => {
  const dir = await fresh();
  const unpacked = await unpackLayer(pieces(gzipSync(layer), 777), 'gzip', dir, 10_000_000);
  assert.equal(unpacked.size, layer.length);
  assert.equal(unpacked.entries, 303);
  assert.equal(await readFile(path.join(dir, 'bin', 'tool-13'), 'utf8'), '#!/bin/sh\necho 13\n'.repeat(7));
  assert.equal((await readFile(path.join(dir, 'big'))).length, 300_000);
  assert.equal((await stat(path.join(dir, 'bin', 'suid'))).mode & 0o7777, 0o755);
});

test('a broken layer is refused as invalid: truncated gzip, bytes that are no tar', async () => {
  const gz = gzipSync(layer);
  await assert.rejects(unpackLayer(pieces(gz.subarray(0, gz.length - 5000)), 'gzip', await fresh(), 10_000_000), (error: unknown) => error instanceof LayerError && error.reason === 'invalid');
  await assert.rejects(unpackLayer(pieces(gzipSync(Buffer.alloc(20_000, 65))), 'gzip', await fresh(), 10_000_000), (error: unknown) => error instanceof LayerError && error.reason === 'invalid');
});

test('a layer that unpacks past the budget is refused as too large', async () => {
  await assert.rejects(unpackLayer(pieces(gzipSync(layer)), 'gzip', await fresh(), 100_000), (error: unknown) => error instanceof LayerError && error.reason === 'too-large');
});

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createLogWriter, type LogLine } from '../../agent/log-file.ts';
import { appendSystemLines, readFileEnd, readLogLines, selectLogLines } from './log-read.ts';

async function withDir(check: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-log-read-'));
  try {
    await check(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const line = (seq: number): LogLine => ({ seq, at: '2026-01-01T00:00:00.000Z', stream: 'stdout', text: `line ${seq}` });

test('lines after since, at most limit', () => {
  const lines = [1, 2, 3, 4, 5].map(line);
  assert.deepEqual(selectLogLines(lines), { lines, dropped: 0 });
  assert.deepEqual(selectLogLines(lines, { since: 2, limit: 2 }), { lines: [line(3), line(4)], dropped: 0 });
  assert.deepEqual(selectLogLines(lines, { since: 5 }), { lines: [], dropped: 0 });
});

test('dropped counts the lines lost to the size bound after since and before the first line returned', () => {
  const kept = [41, 42, 43].map(line);
  assert.equal(selectLogLines(kept).dropped, 40);
  assert.equal(selectLogLines(kept, { since: 30 }).dropped, 10);
  assert.equal(selectLogLines(kept, { since: 41 }).dropped, 0);
  assert.deepEqual(selectLogLines([], { since: 3 }), { lines: [], dropped: 0 });
});

test('a rotated log reads back in order across both files, and dropped tells what the bound took', async () => {
  await withDir(async (dir) => {
    const log = createLogWriter(dir, { maxBytes: 2000 });
    for (let i = 1; i <= 100; i++) log.write('stdout', `line ${i}`);
    log.close();
    const lines = await readLogLines(dir);
    assert.equal(lines.at(-1)!.seq, 100);
    assert.deepEqual(lines.map((l) => l.seq), Array.from({ length: lines.length }, (_, i) => lines[0].seq + i));
    const read = selectLogLines(lines);
    assert.equal(read.dropped, lines[0].seq - 1);
    assert.ok(read.dropped > 0);
  });
});

test('a log file replaced by a link or a directory reads as empty; the end of a large file is read whole lines only', async () => {
  await withDir(async (dir) => {
    await writeFile(path.join(dir, 'secret'), 'do not read\n');
    await symlink(path.join(dir, 'secret'), path.join(dir, 'log.jsonl'));
    await mkdir(path.join(dir, 'log.1.jsonl'));
    assert.deepEqual(await readLogLines(dir), []);
    await writeFile(path.join(dir, 'big'), 'aaaa\nbbbb\ncccc\n');
    assert.equal(await readFileEnd(path.join(dir, 'big'), 8), 'cccc\n');
  });
});

test('the sandbox\'s own output is added as system lines numbered on', () => {
  const lines = appendSystemLines([line(1)], 'bwrap: Can\'t mount\n\n  \nsecond\n', 'then');
  assert.deepEqual(lines.slice(1), [
    { seq: 2, at: 'then', stream: 'system', text: "bwrap: Can't mount" },
    { seq: 3, at: 'then', stream: 'system', text: 'second' },
  ]);
});

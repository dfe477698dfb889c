import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createLogWriter, lineSplitter, LOG_MAX_LINE_CHARS, parseLogLine, type LogLine } from './log-file.ts';

async function withDir(check: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-log-file-'));
  try {
    await check(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const linesOf = async (file: string): Promise<LogLine[]> =>
  (await readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => parseLogLine(line)!);

test('lines are JSON with a seq that grows by one, the time and the stream', async () => {
  await withDir(async (dir) => {
    const log = createLogWriter(dir, { now: () => new Date('2026-01-02T03:04:05.000Z') });
    log.write('system', 'Starting');
    log.write('stdout', 'hello "world"');
    log.close();
    assert.deepEqual(await linesOf(path.join(dir, 'log.jsonl')), [
      { seq: 1, at: '2026-01-02T03:04:05.000Z', stream: 'system', text: 'Starting' },
      { seq: 2, at: '2026-01-02T03:04:05.000Z', stream: 'stdout', text: 'hello "world"' },
    ]);
  });
});

test('at the size bound the file becomes the previous one and a new file begins; one previous file is kept', async () => {
  await withDir(async (dir) => {
    const log = createLogWriter(dir, { maxBytes: 1000 });
    for (let i = 1; i <= 60; i++) log.write('stdout', `line ${i} ${'x'.repeat(40)}`);
    log.close();
    assert.deepEqual((await readdir(dir)).sort(), ['log.1.jsonl', 'log.jsonl']);
    const previous = await linesOf(path.join(dir, 'log.1.jsonl'));
    const current = await linesOf(path.join(dir, 'log.jsonl'));
    assert.equal(current.at(-1)!.seq, 60);
    assert.equal(previous.at(-1)!.seq + 1, current[0].seq);
    for (const file of ['log.1.jsonl', 'log.jsonl']) assert.ok((await readFile(path.join(dir, file))).length <= 1000);
    const fresh = createLogWriter(dir);
    fresh.close();
    assert.deepEqual(await readdir(dir), ['log.jsonl'], 'a new run starts a fresh log');
  });
});

test('overlong lines are cut; anything that is not a log line is refused', async () => {
  await withDir(async (dir) => {
    const log = createLogWriter(dir);
    log.write('stderr', 'y'.repeat(LOG_MAX_LINE_CHARS + 10));
    log.close();
    const [line] = await linesOf(path.join(dir, 'log.jsonl'));
    assert.equal(line.text, `${'y'.repeat(LOG_MAX_LINE_CHARS)} [line cut]`);
  });
  for (const text of ['', 'not json', '{"seq":1,"at":"x","stream":"other","text":"t"}', '{"seq":"1","at":"x","stream":"stdout","text":"t"}']) {
    assert.equal(parseLogLine(text), undefined, text);
  }
});

test('the splitter hands on whole lines, drops carriage returns and flushes the rest', () => {
  const lines: string[] = [];
  const splitter = lineSplitter((line) => lines.push(line));
  splitter.push('a\r\nb');
  splitter.push('c\n\nd');
  splitter.flush();
  splitter.flush();
  assert.deepEqual(lines, ['a', 'bc', '', 'd']);
});

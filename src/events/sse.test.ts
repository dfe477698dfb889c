import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeSink } from './fake-sink.ts';
import { eventFrame, PING_FRAME, readyFrame, SseText, SseWriter } from './sse.ts';

const t = (text: string, frames = 1) => new SseText(text, frames);

test('an event is three lines and a blank line; ready has id 0 and its own data; a ping is a comment', () => {
  assert.equal(eventFrame(17, 'team.updated', '{"type":"team.updated","team_id":3}'), 'id: 17\nevent: team.updated\ndata: {"type":"team.updated","team_id":3}\n\n');
  assert.equal(readyFrame(new Date('2025-01-02T03:04:05.000Z')), 'id: 0\nevent: ready\ndata: {"type":"ready","at":"2025-01-02T03:04:05.000Z"}\n\n');
  assert.equal(PING_FRAME, ': ping\n\n');
});

test('while the client is behind, frames queue and go out in order in one write on drain', () => {
  const sink = new FakeSink();
  const writer = new SseWriter(sink, { maxQueuedBytes: 1000, maxQueuedFrames: 10 }, () => assert.fail('not dropped'));
  sink.full = true;
  writer.send(t('a\n\n'));
  writer.send(t('b\n\n'));
  writer.send(t('c\n\n'));
  assert.deepEqual(sink.chunks, ['a\n\n'], 'the first write is taken by the socket, the rest waits');
  assert.deepEqual(writer.queued, { bytes: 6, frames: 2 });
  sink.drain();
  assert.deepEqual(sink.chunks, ['a\n\n', 'b\n\nc\n\n']);
  assert.deepEqual(writer.queued, { bytes: 0, frames: 0 });
  writer.send(t('d\n\n'));
  assert.equal(sink.text, 'a\n\nb\n\nc\n\nd\n\n');
});

test('a client that stops reading is dropped when the queue would pass its frame cap', () => {
  const sink = new FakeSink();
  let dropped = 0;
  const writer = new SseWriter(sink, { maxQueuedBytes: 1_000_000, maxQueuedFrames: 3 }, () => dropped++);
  sink.full = true;
  for (let i = 0; i < 4; i++) writer.send(t(`${i}\n\n`));
  assert.equal(dropped, 0);
  assert.deepEqual(writer.queued.frames, 3);
  writer.send(t('4\n\n'));
  assert.equal(dropped, 1);
  assert.ok(sink.destroyed && !sink.ended);
  assert.deepEqual(writer.queued, { bytes: 0, frames: 0 }, 'nothing is held for a dropped client');
  for (let i = 0; i < 10_000; i++) writer.send(t('more\n\n'));
  assert.equal(sink.chunks.length, 1, 'nothing is written after the drop');
  assert.equal(dropped, 1);
});

test('the byte cap counts bytes, not characters', () => {
  const sink = new FakeSink();
  let dropped = false;
  const writer = new SseWriter(sink, { maxQueuedBytes: 10, maxQueuedFrames: 100 }, () => (dropped = true));
  sink.full = true;
  writer.send(t('first'));
  writer.send(t('ääää')); // 8 bytes
  assert.equal(dropped, false);
  writer.send(t('ä')); // 2 more: 10, still within
  assert.equal(dropped, false);
  writer.send(t('x'));
  assert.equal(dropped, true);
});

test('close ends a stream that keeps up and drops one that is behind', () => {
  const keepsUp = new FakeSink();
  new SseWriter(keepsUp, { maxQueuedBytes: 10, maxQueuedFrames: 10 }, () => assert.fail('not dropped')).close();
  assert.ok(keepsUp.ended && !keepsUp.destroyed);

  const behind = new FakeSink();
  behind.full = true;
  let dropped = false;
  const writer = new SseWriter(behind, { maxQueuedBytes: 10, maxQueuedFrames: 10 }, () => (dropped = true));
  writer.send(t('a'));
  writer.close();
  assert.ok(behind.destroyed && dropped);
  behind.drain();
  assert.deepEqual(behind.chunks, ['a'], 'a drain after the close writes nothing');
});

test('each text is one write to the sink; texts queued while the client is behind go out as one', () => {
  const calls: string[] = [];
  const sink = new FakeSink();
  const write = sink.write.bind(sink);
  sink.write = (text: SseText) => (calls.push(text.text.trim()), write(text));
  const writer = new SseWriter(sink, { maxQueuedBytes: 1000, maxQueuedFrames: 10 }, () => assert.fail('not dropped'));
  writer.send(t('a\n\n'));
  sink.full = true;
  writer.send(t('b\n\n')); // taken, but the sink asks to wait
  writer.send(t('c\n\nd\n\n', 2));
  writer.send(t('e\n\n'));
  assert.deepEqual(writer.queued, { bytes: 9, frames: 3 }, 'a text of two frames counts as two');
  sink.drain();
  assert.deepEqual(calls, ['a', 'b', 'c\n\nd\n\ne']);
});

test('a text is encoded once; as an HTTP chunk it is its size in hex, its bytes and a line break', () => {
  const text = new SseText('data: ä\n\n');
  assert.equal(text.bytes.toString(), 'data: ä\n\n');
  assert.equal(text.chunked.toString(), 'a\r\ndata: ä\n\n\r\n', '10 bytes (ä is two)');
  assert.equal(text.chunked, text.chunked, 'built once');
});

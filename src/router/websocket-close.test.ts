import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeFrame, FrameBoundary } from './websocket-close.ts';

const frame = (payload: Buffer, masked = false) => {
  const length = payload.length;
  const head = length < 126 ? [0x82, length] : length < 65536 ? [0x82, 126, length >> 8, length & 0xff] : [0x82, 127, 0, 0, 0, 0, (length >>> 24) & 0xff, (length >> 16) & 0xff, (length >> 8) & 0xff, length & 0xff];
  if (masked) head[1] |= 0x80;
  return Buffer.concat([Buffer.from(head), masked ? Buffer.alloc(4) : Buffer.alloc(0), payload]);
};

test('frame boundaries are followed across chunks, for short, 16-bit and 64-bit lengths, masked or not', () => {
  const frames = new FrameBoundary();
  assert.equal(frames.atBoundary, true);
  const bytes = Buffer.concat([frame(Buffer.alloc(5)), frame(Buffer.alloc(300)), frame(Buffer.alloc(70_000)), frame(Buffer.alloc(3), true)]);
  const ends = new Set([7, 7 + 304, 7 + 304 + 70_010, bytes.length]);
  for (let i = 0; i < bytes.length; i += 1) {
    frames.feed(bytes.subarray(i, i + 1));
    assert.equal(frames.atBoundary, ends.has(i + 1), `after byte ${i + 1}`);
  }
  const whole = new FrameBoundary();
  whole.feed(bytes);
  assert.equal(whole.atBoundary, true);
  whole.feed(bytes.subarray(0, 1));
  assert.equal(whole.atBoundary, false);
});

test('a close frame carries the code and the reason, cut to fit 125 bytes', () => {
  assert.deepEqual([...closeFrame(4401, 'no')], [0x88, 4, 0x11, 0x31, 0x6e, 0x6f]);
  const long = closeFrame(4403, 'x'.repeat(500));
  assert.equal(long[1], 125);
  assert.equal(long.length, 127);
});

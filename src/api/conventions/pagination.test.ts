import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Problem } from '../../core/problems.ts';
import { CursorCodec, pageOf } from './pagination.ts';

test('a cursor decodes only for the list and installation that issued it', () => {
  const codec = new CursorCodec('secret');
  const cursor = codec.encode('teams', { id: 5 });
  assert.deepEqual(codec.decode('teams', cursor), { id: 5 });
  assert.throws(() => codec.decode('orgs', cursor), Problem);
  assert.throws(() => new CursorCodec('other').decode('teams', cursor), Problem);
  const [body] = cursor.split('.');
  const tampered = Buffer.from(JSON.stringify({ id: 6 })).toString('base64url');
  assert.throws(() => codec.decode('teams', `${tampered}.${cursor.split('.')[1]}`), Problem);
  assert.throws(() => codec.decode('teams', body), Problem);
});

test('pageOf keeps limit rows and makes a cursor only when more exist', () => {
  const more = pageOf([1, 2, 3], 2, (n) => n * 10, (last) => `after ${last}`);
  assert.deepEqual(more, { items: [10, 20], next_cursor: 'after 2' });
  assert.deepEqual(pageOf([1, 2], 2, (n) => n, () => 'x'), { items: [1, 2] });
});

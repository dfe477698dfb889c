import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { SecretBox } from './secret-box.ts';

test('a sealed secret opens with the same key and place only', () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('hunter2', 'vault:1:DB_PASSWORD');
  assert.ok(!sealed.ciphertext.includes(Buffer.from('hunter2')));
  assert.equal(box.open(sealed, 'vault:1:DB_PASSWORD'), 'hunter2');
  assert.throws(() => box.open(sealed, 'vault:2:DB_PASSWORD'));
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'vault:1:DB_PASSWORD'), /sealed with key/);
  const tampered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext.map((b) => b ^ 1)) };
  assert.throws(() => box.open(tampered, 'vault:1:DB_PASSWORD'));
  assert.throws(() => new SecretBox(randomBytes(16)), /32 bytes/);
});

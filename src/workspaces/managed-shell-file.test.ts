import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { renderManagedEnvFile } from './managed-shell-file.ts';

test('the file is export lines a POSIX shell sources back to the same values, quotes and spaces included', () => {
  const env = { PGPASSWORD: "it's p@ss word", DATABASE_URL: 'postgresql://app:p%40ss@db:5432/app', PGHOST: 'db' };
  const text = renderManagedEnvFile(env);
  assert.match(text, /^# /);
  assert.deepEqual(text.split('\n').filter((l) => l.startsWith('export')).map((l) => l.split('=')[0]), ['export DATABASE_URL', 'export PGHOST', 'export PGPASSWORD']);
  const read = execFileSync('sh', ['-c', `${text}\nprintf '%s|%s|%s' "$PGPASSWORD" "$DATABASE_URL" "$PGHOST"`], { env: {} }).toString();
  assert.equal(read, `${env.PGPASSWORD}|${env.DATABASE_URL}|db`);
});

test('no managed services: a file with only its comment', () => {
  assert.equal(renderManagedEnvFile({}).split('\n').filter((l) => l.startsWith('export')).length, 0);
});

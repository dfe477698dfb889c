import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startEditorServer, type EditorServer } from './editor.ts';

let root: string;
let editor: EditorServer;
let base: string;

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-'));
  await writeFile(path.join(root, 'hello.txt'), 'hello\n');
  editor = await startEditorServer({ root, host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${editor.port}`;
});
after(async () => {
  await editor?.close();
  await rm(root, { recursive: true, force: true });
});

const request = (url: string, init?: RequestInit) => fetch(`${base}${url}`, { ...init, headers: { connection: 'close', ...init?.headers } });

test('the page is a usable editor: a file tree, a textarea and a save button', async () => {
  const response = await request('/');
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
  const page = await response.text();
  for (const part of ['<nav id="tree"', '<textarea id="text"', '<button id="save"', "fetch('api/tree')"]) assert.ok(page.includes(part), part);
});

test('the tree and a file are served as JSON and text', async () => {
  assert.deepEqual(await (await request('/api/tree')).json(), { entries: [{ path: 'hello.txt', type: 'file' }], truncated: false });
  const file = await request('/api/file?path=hello.txt');
  assert.equal(file.status, 200);
  assert.equal(await file.text(), 'hello\n');
  assert.equal((await request('/api/file?path=missing.txt')).status, 404);
  assert.equal((await request('/api/file?path=../../etc/passwd')).status, 400);
});

test('PUT saves the file and answers 204; a path outside the workspace answers 400', async () => {
  const saved = await request('/api/file?path=notes/a%20b.txt', { method: 'PUT', body: 'saved ✓\n' });
  assert.equal(saved.status, 204);
  assert.equal(await readFile(path.join(root, 'notes/a b.txt'), 'utf8'), 'saved ✓\n');
  const outside = await request('/api/file?path=/tmp/x', { method: 'PUT', body: 'x' });
  assert.equal(outside.status, 400);
  assert.equal(await outside.text(), 'The path is outside the workspace.');
});

test('unknown routes and methods answer 404', async () => {
  assert.equal((await request('/api/nothing')).status, 404);
  assert.equal((await request('/api/tree', { method: 'DELETE' })).status, 404);
});

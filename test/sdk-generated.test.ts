// The checked-in SDK (sdk/) is what the routes generate now: a route whose schema changed without `npm run sdk`
// fails here, in CI. The second test shows the check fails when the document differs from the one generated from.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openApiDocument } from '../src/api/openapi-document.ts';
import { generateSdkFiles, SDK_DIR, staleSdkFiles, writeSdkFiles } from '../scripts/sdk/generate.ts';

test('sdk/ holds what npm run sdk generates from the routes now (else: run npm run sdk and commit)', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-sdk-'));
  try {
    const files = await generateSdkFiles(await openApiDocument());
    await writeSdkFiles(dir, files);
    assert.deepEqual(await readdir(path.join(dir, 'src/generated')), await readdir(path.join(SDK_DIR, 'src/generated')), 'no other generated file');
    for (const name of Object.keys(files)) {
      const fresh = await readFile(path.join(dir, name), 'utf8');
      const checkedIn = await readFile(path.join(SDK_DIR, name), 'utf8');
      assert.ok(fresh === checkedIn, `sdk/${name} is stale: run npm run sdk`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a changed route (a new response field, a new route) makes the checked-in SDK stale', async () => {
  const changedField = structuredClone(await openApiDocument());
  changedField.paths['/api/v1/version'].get.responses['200'].content['application/json'].schema.properties.build = { type: 'string' };
  assert.deepEqual(await staleSdkFiles(SDK_DIR, await generateSdkFiles(changedField)), ['openapi.yaml', 'src/generated/openapi.ts']);

  const newRoute = structuredClone(await openApiDocument());
  newRoute.paths['/api/v1/widgets'] = { get: newRoute.paths['/api/v1/version'].get };
  assert.deepEqual(await staleSdkFiles(SDK_DIR, await generateSdkFiles(newRoute)), ['openapi.yaml', 'src/generated/openapi.ts']);

  // Only the types change: a description that becomes a doc comment.
  const typesOnly = structuredClone(await openApiDocument());
  typesOnly.paths['/api/v1/version'].get.summary = 'The version of the server';
  assert.ok((await staleSdkFiles(SDK_DIR, await generateSdkFiles(typesOnly))).includes('src/generated/openapi.ts'));
});

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { prepareCodeServerData } from './code-server-layout.ts';

test('code-server keeps its caches and state under its data directory, and starts with calm settings written only once', async () => {
  const volume = await mkdtemp(path.join(os.tmpdir(), 'svc-code-server-'));
  try {
    const dataDir = path.join(volume, '.svc', 'code-server');
    const env: NodeJS.ProcessEnv = {};
    prepareCodeServerData(dataDir, env);
    const settingsFile = path.join(dataDir, 'user-data/User/settings.json');
    assert.equal(JSON.parse(await readFile(settingsFile, 'utf8'))['workbench.startupEditor'], 'none');
    assert.equal(await readFile(path.join(volume, '.svc/.gitignore'), 'utf8'), '*\n', 'the hidden directory stays out of git status');
    for (const [name, dir] of [['XDG_CACHE_HOME', 'cache'], ['XDG_CONFIG_HOME', 'config'], ['XDG_DATA_HOME', 'data'], ['XDG_STATE_HOME', 'state']]) {
      assert.equal(env[name], path.join(dataDir, dir));
    }
    await writeFile(settingsFile, '{ "editor.fontSize": 20 }\n');
    prepareCodeServerData(dataDir, env);
    assert.equal(await readFile(settingsFile, 'utf8'), '{ "editor.fontSize": 20 }\n', "the person's settings are kept");
  } finally {
    await rm(volume, { recursive: true, force: true });
  }
});

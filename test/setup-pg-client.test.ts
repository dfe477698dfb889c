// scripts/setup-pg-client.sh without the network: a second run over an installed client is instant and downloads
// nothing (its mirror does not even answer); an install whose mirror cannot be reached fails with the reason and
// leaves no marker, so dumps stay refused (501) instead of running half-installed tools; the installed wrappers run
// the client 17 through its own loader.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findPgClientTools, pgClientDir } from '../src/managed/pg-client.ts';
import { DEFAULT_TOOLS_DIR } from '../src/runtime/local/editor-tools.ts';

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'setup-pg-client.sh');
const toolsDir = process.env.SVC_TOOLS_DIR || DEFAULT_TOOLS_DIR;
const installed = await findPgClientTools(toolsDir);
const unreachable = 'http://127.0.0.1:9/debian'; // the discard port: nothing answers there

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-pg-client-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = (tools: string) => spawnSync('bash', [script], { env: { ...process.env, SVC_TOOLS_DIR: tools, SVC_DEBIAN_MIRROR: unreachable }, encoding: 'utf8' });

test('a second run over an installed client is instant and downloads nothing', { skip: installed ? false : `no client installed in ${toolsDir}; run scripts/setup-pg-client.sh` }, async () => {
  const tools = path.join(dir, 'installed');
  await mkdir(path.join(tools, 'pg-client'), { recursive: true });
  await symlink(pgClientDir(toolsDir), pgClientDir(tools));
  const result = run(tools);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), `setup-pg-client: PostgreSQL client ${installed!.version} installed in ${pgClientDir(tools)}`);
  for (const tool of [installed!.pgDump, installed!.pgRestore, installed!.psql]) {
    assert.match(execFileSync(tool, ['--version'], { encoding: 'utf8' }), /^\S+ \(PostgreSQL\) 17\.\d+ /);
  }
});

test('an install whose mirror cannot be reached fails with the reason and leaves no marker', { skip: process.getuid?.() !== 0 ? 'apt-get update needs root' : false }, async () => {
  const tools = path.join(dir, 'fresh');
  const result = run(tools);
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /^setup-pg-client: apt-get update of trixie from http:\/\/127\.0\.0\.1:9\/debian failed; the last lines of .*install\.log:/);
  assert.equal(existsSync(path.join(pgClientDir(tools), 'pg-client.version')), false);
  assert.equal(await findPgClientTools(tools), undefined);
});

// The prebuilt CLI (dist/cli, what the installed `svc` runs) answers exactly as the TypeScript sources do: the help
// of every command and group, usage errors, lint, and real commands against a real server. Same stdout, same
// stderr, same exit status.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { apiCommandLoaders, isCommand } from '../src/cli/commands.ts';
import { cliOutDir } from '../scripts/build-cli.mjs';
import { runSvc } from './helpers/process.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let scratch: string;
before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-cli-prebuilt-'));
});
after(() => rm(scratch, { recursive: true, force: true }));

type Env = Record<string, string | undefined>;

/** Nothing from the person running the tests: no stored login, no SVC_* settings, no browser. */
const quietEnv = (extra: Env = {}): Env => ({
  XDG_CONFIG_HOME: path.join(scratch, 'config'), SVC_URL: undefined, SVC_TOKEN: undefined, SVC_TEAM: undefined,
  SVC_WORKSPACE: undefined, SVC_BROWSER: 'true', NO_COLOR: '1', ...extra,
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The commands run through one entry module in one process (test/helpers/cli-runner.mjs). */
async function inOneProcess(entry: 'sources' | 'prebuilt', argvs: string[][], env: Env): Promise<CliRun[]> {
  const out = path.join(scratch, `${entry}-${randomUUID()}.json`);
  const runner = path.join(root, 'test/helpers/cli-runner.mjs');
  // The prebuilt side without tsx: plain Node, as the installed svc runs it.
  const args = entry === 'sources' ? ['--import', import.meta.resolve('tsx'), runner, path.join(root, 'src/cli/main.ts')] : [runner, path.join(cliOutDir, 'main.js')];
  await promisify(execFile)(process.execPath, [...args, out, JSON.stringify(argvs)], { cwd: scratch, env: { ...process.env, ...env } });
  return JSON.parse(await readFile(out, 'utf8')) as CliRun[];
}

/** Each command as its own `svc` process (bin/svc.js, the installed command), two at a time. */
async function asSvcProcesses(argvs: string[][], env: Env): Promise<CliRun[]> {
  const runs: CliRun[] = [];
  for (let i = 0; i < argvs.length; i += 2) runs.push(...(await Promise.all(argvs.slice(i, i + 2).map((argv) => runSvc(argv, env, { cwd: scratch })))));
  return runs;
}

/** Same stdout, stderr and exit status from the sources, the prebuilt CLI, and (with `svc: true`) bin/svc.js. */
async function assertSameAnswers(argvs: string[][], env: Env, options: { svc?: boolean } = {}): Promise<void> {
  const [sources, prebuilt, processes] = await Promise.all([
    inOneProcess('sources', argvs, env),
    inOneProcess('prebuilt', argvs, env),
    options.svc ? asSvcProcesses(argvs, env) : undefined,
  ]);
  argvs.forEach((argv, i) => {
    assert.deepEqual(prebuilt[i], sources[i], `svc ${argv.join(' ')}`);
    if (processes) assert.deepEqual(processes[i], sources[i], `svc ${argv.join(' ')} as a process`);
  });
}

/** The help of every command, group and command of a group, and the usage errors around them. */
async function everyHelp(): Promise<string[][]> {
  const argvs = [[], ['help'], ['--help'], ['-h'], ['version'], ['--version'], ['wz'], ['lint', '--help']];
  for (const [name, load] of Object.entries(apiCommandLoaders)) {
    const loaded = await load();
    argvs.push([name, '--help'], [name, '--no-such-flag']);
    if (isCommand(loaded)) continue;
    argvs.push([name], [name, 'no-such-command']);
    for (const sub of Object.keys(loaded)) argvs.push([name, sub, '--help'], [name, sub, '--no-such-flag']);
  }
  return argvs;
}

test('every command, group and subcommand prints the same help and usage errors prebuilt as from the sources', async () => {
  const argvs = await everyHelp();
  assert.ok(argvs.length > 100, `only ${argvs.length} commands`);
  await assertSameAnswers(argvs, quietEnv());
  // The installed command itself for a few: the entry point, the dispatch, a group loaded on demand, and the
  // server-side commands, which run their sources through tsx (so only as svc processes here).
  await assertSameAnswers([['version'], ['--help'], ['ws', '--help'], ['ws', 'list', '--help'], ['lint', '--help'], ['nope']], quietEnv(), { svc: true });
  const serverSide = [['server', '--help'], ['admin', '--help']];
  assert.deepEqual(await asSvcProcesses(serverSide, quietEnv()), await inOneProcess('sources', serverSide, quietEnv()));
});

test('lint and commands that need a login answer the same prebuilt as from the sources', async () => {
  await writeFile(path.join(scratch, 'svc.yml'), 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    stepz: []\n');
  await writeFile(path.join(scratch, 'good.yml'), 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{run: npm start}]\n');
  await assertSameAnswers(
    [['lint'], ['lint', '--json'], ['lint', 'good.yml'], ['lint', 'missing.yml'], ['whoami'], ['ws', 'list'], ['keys', 'list', '--json']],
    quietEnv(),
  );
});

let server: TestServer;
test('real commands against a server answer the same prebuilt as from the sources', async (t) => {
  server = await startTestServer();
  t.after(() => server.close());
  const org = (await server.admin.post('/orgs', { name: 'Prebuilt' })).body.id;
  const team = (await server.admin.post('/teams', { org_id: org, name: 'Prebuilt team' })).body.id;
  const env = quietEnv({ SVC_URL: server.url, SVC_TOKEN: server.admin.auth.token });
  await assertSameAnswers(
    [
      ['whoami'], ['whoami', '--json'], ['ws', 'list'], ['ws', 'list', '--json'], ['ws', 'list', '--team', String(team)],
      ['ws', 'show', 'nothing-here', '--team', String(team)], ['ws', 'show', 'nothing-here', '--team', String(team), '--json'],
      ['managed', 'list', '--team', String(team), '--json'], ['registry', 'list', '--team', String(team)], ['ws', 'list', '--team', 'no-such-team'],
    ],
    env,
    { svc: true },
  );
});

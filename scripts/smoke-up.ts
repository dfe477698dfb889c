// The README's first command as a new user meets it, for CI (.ci/run): `npm run up` in a clean clone of this
// repository, in a clean environment (env -i: PATH, a temporary HOME, nothing of an outer npm), on the embedded
// PostgreSQL. It installs everything (code-server too, into SVC_TOOLS_DIR, where a second run finds it by version),
// then: the sign-in link works, the API answers, the server sees code-server; SIGTERM to npm stops everything, the
// embedded PostgreSQL included; `svc admin sign-in-link` works while the server is down.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../test/helpers/client.ts';
import { createBareRepository } from '../test/helpers/git.ts';
import { until } from '../test/helpers/wait.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(await readFile(path.join(repo, 'package.json'), 'utf8'));
const editorVersion = /^version=(\S+)$/m.exec(await readFile(path.join(repo, 'scripts/setup-editor.sh'), 'utf8'))![1];
// The first install builds code-server (about 13 minutes of CPU on 2 cores); later runs take a minute.
const installMinutes = 25;

const scratch = await mkdtemp(path.join(os.tmpdir(), 'svc-smoke-up-'));
// Open for traversal like a home directory: as root, the embedded PostgreSQL runs as the user postgres.
await chmod(scratch, 0o755);
const clone = path.join(scratch, 'svc');
const home = path.join(scratch, 'home');
await mkdir(home);
execFileSync('git', ['clone', '--quiet', repo, clone]);
const env: Record<string, string> = {
  PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
  HOME: home,
  ...(process.env.SVC_TOOLS_DIR ? { SVC_TOOLS_DIR: process.env.SVC_TOOLS_DIR } : {}),
};

// Its own process group, as a terminal gives it, so that what is left of it after the stop can be seen.
const up = spawn('npm', ['run', 'up', '--', '--listen', '127.0.0.1:0'], { cwd: clone, env, detached: true });
let output = '';
const watchers = new Set<() => void>();
const onOutput = (chunk: Buffer) => {
  output += chunk;
  // The set-up's progress lines, so that a slow first install is visibly at work in the CI log.
  for (const line of chunk.toString().split('\n')) if (/^(setup|setup-editor|console|svc):/.test(line)) console.log(`  ${line}`);
  watchers.forEach((watch) => watch());
};
up.stdout.on('data', onOutput);
up.stderr.on('data', onOutput);
const exited = new Promise<number | null>((resolve) => up.on('exit', (code) => {
  watchers.forEach((watch) => watch());
  resolve(code);
}));

/** The first match of `pattern` in what npm run up printed; fails as soon as it exits without it. */
function printed(pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no ${pattern} within ${installMinutes} minutes:\n${output}`)), installMinutes * 60_000);
    const finish = (error?: Error, found?: RegExpExecArray) => {
      clearTimeout(timer);
      watchers.delete(watch);
      if (error) reject(error);
      else resolve(found!);
    };
    const watch = () => {
      const found = pattern.exec(output);
      if (found) finish(undefined, found);
      else if (up.exitCode !== null) finish(new Error(`npm run up exited with ${up.exitCode} before ${pattern}:\n${output}`));
    };
    watchers.add(watch);
    watch();
  });
}
const groupAlive = () => {
  try {
    process.kill(-up.pid!, 0);
    return true;
  } catch {
    return false;
  }
};

const conformanceYml = `schema: svc/v1
services:
  web:
    type: steps
    steps:
      - run: node -e "require('http').createServer((q, s) => s.end('hi')).listen(8080, '0.0.0.0')"
    ports:
      - port: 8080
        routes:
          - path: /
`;

/**
 * `svc conformance` (the clone's CLI) against the installation, in a team of its own, with a repository it can sync:
 * every rule must pass (none skipped), else CI fails.
 */
async function conformance(url: string, admin: ApiClient): Promise<void> {
  const org = await admin.post('/orgs', { name: 'Conformance' });
  assert.equal(org.status, 201, org.text);
  const team = await admin.post('/teams', { org_id: org.body.id, name: 'Conformance' });
  assert.equal(team.status, 201, team.text);
  // A path on this machine, as a developer of a single-machine installation gives one: `npm run up` clones the local
  // repositories of the user who started it (--allow-local-repositories own); a server on the host's loopback is
  // out of the pods' reach (the egress policy, docs/runtime.md "The pod network").
  const repository = await createBareRepository({ 'svc.yml': conformanceYml });
  try {
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(clone, 'bin/svc.js'), 'conformance', url, '--team', String(team.body.id), '--repo', repository.path], {
        cwd: clone,
        env: { ...env, SVC_TOKEN: admin.auth.token! },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
        process.stdout.write(chunk.toString().replace(/^(?=.)/gm, '  '));
      });
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
      child.on('error', reject);
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(run.code, 0, `svc conformance failed:\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /\nconformance: \d+ passed, 0 failed, 0 skipped\n$/, run.stdout);
  } finally {
    await repository.remove();
  }
}

try {
  const [, url] = await printed(/listening on (\S+)\n/);
  const [, link] = await printed(/^\s+(http\S+\/sign-in#token=\S+)$/m);
  assert.match(output, /Database: embedded, in /, output);
  assert.equal(new URL(link).origin, new URL(url).origin, 'the sign-in link points at the server');
  assert.doesNotMatch(output, /^svc: code-server could not be installed/m, output);
  assert.match(output, new RegExp(`setup-editor: code-server ${editorVersion.replaceAll('.', '\\.')} (is )?installed`), output);
  await printed(new RegExp(`editor: code-server ${editorVersion.replaceAll('.', '\\.')} from `));

  const anonymous = new ApiClient(url);
  const versionAnswer = await anonymous.get('/version');
  assert.equal(versionAnswer.status, 200, versionAnswer.text);
  assert.equal(versionAnswer.body.version, version);
  assert.equal(versionAnswer.headers.get('svc-version'), version);
  const admin = await anonymous.signInWithLink(new URL(link).hash.slice('#token='.length));
  const key = await admin.mintKey('smoke');
  const me = await key.get('/me');
  assert.equal(me.status, 200, me.text);
  await conformance(url, key);

  // A process manager stops the command it started: SIGTERM to npm reaches the server, which stops its data plane
  // and its PostgreSQL.
  process.kill(up.pid!, 'SIGTERM');
  assert.equal(await exited, 0, output);
  await until(async () => (groupAlive() ? undefined : true), 'every process of npm run up to stop', 30_000);

  const offline = execFileSync(process.execPath, [path.join(clone, 'bin/svc.js'), 'admin', 'sign-in-link', '--data-dir', path.join(clone, '.svc')], { cwd: clone, env, encoding: 'utf8' });
  assert.match(offline, /^http\S+\/sign-in#token=\S+\n$/);
  console.log(`npm run up from a clean clone: installed (code-server ${editorVersion}), signed in as ${me.body.email}, svc conformance passed, stopped by SIGTERM, sign-in link printed offline`);
} finally {
  if (groupAlive()) process.kill(-up.pid!, 'SIGKILL');
  await rm(scratch, { recursive: true, force: true });
}

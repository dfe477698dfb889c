// `svc lint`: run in-process on temporary files; exit 0 valid, 1 errors, 2 unreadable or bad arguments.
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lintCommand } from '../src/cli/lint.ts';

const valid = 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    steps: [{run: npm start}]\n  db:\n    type: managed\n    provider: postgresql\n';
const invalid = 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    replicas: 0\n    imagee: x\n';

let dir: string;

async function lint(argv: string[], cwd = dir): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await lintCommand(argv, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), cwd });
  return { code, stdout, stderr };
}

describe('svc lint', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'svc-lint-'));
    await writeFile(path.join(dir, 'svc.yml'), valid);
    await writeFile(path.join(dir, 'svc.ci.yml'), invalid);
    await writeFile(path.join(dir, 'broken.yml'), 'schema: svc/v1\nservices: [\n');
    await mkdir(path.join(dir, 'app'));
    await writeFile(path.join(dir, 'app', 'svc.yml'), valid);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a valid svc.yml in the current directory exits 0 with a short OK line', async () => {
    assert.deepEqual(await lint([]), { code: 0, stdout: 'svc.yml: OK (svc/v1, 2 services)\n', stderr: '' });
  });

  test('errors print file:line:column: code: message and exit 1', async () => {
    const result = await lint(['svc.ci.yml']);
    assert.equal(result.code, 1);
    assert.equal(
      result.stdout,
      'svc.ci.yml:3:3: required: service web (a steps service) is missing the required key steps\n' +
        'svc.ci.yml:5:15: out-of-range: replicas of service web must be between 1 and 100, not 0\n' +
        'svc.ci.yml:6:5: unknown-key: unknown key "imagee" in service web (a steps service); did you mean image?\n',
    );
    assert.equal(result.stderr, 'svc.ci.yml: 3 errors\n');
  });

  test('--profile P checks svc.P.yml', async () => {
    const result = await lint(['--profile', 'ci']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^svc\.ci\.yml:3:3: required:/);
    assert.equal((await lint(['--profile=ci', '--json'])).code, 1);
  });

  test('a directory stands for its svc.yml', async () => {
    assert.deepEqual(await lint(['app']), { code: 0, stdout: `${path.join('app', 'svc.yml')}: OK (svc/v1, 2 services)\n`, stderr: '' });
  });

  test('--json prints the file, whether it is valid and the errors', async () => {
    const result = await lint(['svc.ci.yml', '--json']);
    assert.equal(result.code, 1);
    const body = JSON.parse(result.stdout);
    assert.equal(body.file, 'svc.ci.yml');
    assert.equal(body.valid, false);
    assert.deepEqual(body.errors[1], { pointer: '/services/web/replicas', message: 'replicas of service web must be between 1 and 100, not 0', line: 5, column: 15, code: 'out-of-range', subject: 'web' });
    const ok = await lint(['--json']);
    assert.deepEqual([ok.code, JSON.parse(ok.stdout)], [0, { file: 'svc.yml', valid: true, errors: [], omitted: 0 }]);
  });

  test('YAML syntax errors are errors of the file (exit 1), with their place', async () => {
    const result = await lint(['broken.yml']);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /^broken\.yml:3:1: yaml-syntax: /);
  });

  test('a file that cannot be read exits 2', async () => {
    assert.deepEqual(await lint(['missing.yml']), { code: 2, stdout: '', stderr: 'svc lint: cannot read missing.yml: no such file\n' });
    const empty = await mkdtemp(path.join(os.tmpdir(), 'svc-lint-empty-'));
    assert.equal((await lint([], empty)).code, 2);
    await rm(empty, { recursive: true });
    if (process.getuid?.() !== 0) {
      const locked = path.join(dir, 'locked.yml');
      await writeFile(locked, valid);
      await chmod(locked, 0o000);
      assert.equal((await lint(['locked.yml'])).code, 2);
    }
  });

  test('bad arguments exit 2 with the usage', async () => {
    for (const argv of [['--frobnicate'], ['--profile'], ['--profile', 'Bad Name'], ['a.yml', 'b.yml'], ['svc.yml', '--profile', 'ci']]) {
      const result = await lint(argv);
      assert.equal(result.code, 2, argv.join(' '));
      assert.match(result.stderr, /^svc lint: /);
    }
    const help = await lint(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: svc lint/);
  });
});

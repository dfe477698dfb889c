// The console and the CLI name routes as the OpenAPI document does, through the SDK's typed client: a route renamed
// in the generated types (what `npm run sdk` writes after a route change) fails their type-check at the callers.
// Each check compiles a copy of sdk/ with one route renamed beside the real console/ or src/, in a scratch
// directory inside this checkout (so that node_modules resolves).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');

/** Type errors of `project` (a folder of the scratch copy) with `route` renamed in the SDK's generated paths. */
async function typeErrors(folders: string[], project: string, route?: string): Promise<string> {
  const scratch = await mkdtemp(path.join(root, '.sdk-typed-callers-'));
  try {
    for (const folder of ['sdk', ...folders]) await cp(path.join(root, folder), path.join(scratch, folder), { recursive: true, filter: (source) => !source.includes(`${path.sep}dist`) });
    if (project === 'src/cli') {
      // the root tsconfig's options, for the CLI's sources and what they import
      const { compilerOptions } = JSON.parse(await readFile(path.join(root, 'tsconfig.json'), 'utf8'));
      await writeFile(path.join(scratch, 'src/cli/tsconfig.json'), JSON.stringify({ compilerOptions, include: ['.'] }));
    }
    if (route) {
      const generated = path.join(scratch, 'sdk/src/generated/openapi.ts');
      const text = await readFile(generated, 'utf8');
      assert.ok(text.includes(`"${route}": {`), route);
      await writeFile(generated, text.replace(`"${route}": {`, `"${route}-renamed": {`));
    }
    const result = await promisify(execFile)(tsc, ['-p', path.join(scratch, project)], { cwd: scratch }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    return result;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

test('a route renamed in the SDK fails the console type-check where the console calls it', async () => {
  assert.equal(await typeErrors(['console'], 'console'), '', 'the copy type-checks as it is');
  const errors = await typeErrors(['console'], 'console', '/api/v1/workspaces/{ws}/landscape/plan');
  assert.match(errors, /console\/src\/pages\/LandscapeTab\.tsx\(\d+,\d+\): error TS/, errors);
});

test('a route renamed in the SDK fails the CLI type-check where the CLI calls it', async () => {
  assert.equal(await typeErrors(['src', 'package.json'], 'src/cli'), '', 'the copy type-checks as it is');
  const errors = await typeErrors(['src', 'package.json'], 'src/cli', '/api/v1/workspaces/{ws}/stages/{stage}/stop');
  assert.match(errors, /src\/cli\/stages\.ts\(\d+,\d+\): error TS/, errors);
});

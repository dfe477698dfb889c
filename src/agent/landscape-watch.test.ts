// The agent's watch of the landscape files: every way an editor or a person changes svc.yml moves the fingerprint.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { landscapeFilesFingerprint, watchLandscapeFiles, type LandscapeWatch } from './landscape-watch.ts';

let root: string;
before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'svc-landscape-watch-'));
});
after(() => rm(root, { recursive: true, force: true }));

/**
 * A watch, and a wait (with a generous deadline, no fixed sleeps) until it reports the fingerprint the files have
 * now. A write is not atomic, so the watch may report a half-written file first: only the final state is asserted.
 */
function watched(dir: string): { watch: LandscapeWatch; reaches: (what: string) => Promise<string> } {
  const seen: string[] = [];
  let wake: (() => void) | undefined;
  const watch = watchLandscapeFiles({ dir, debounceMs: 20, retryMs: 50, onChange: (fingerprint) => (seen.push(fingerprint), wake?.()) });
  const reaches = async (what: string): Promise<string> => {
    const expected = await landscapeFilesFingerprint(dir);
    const deadline = Date.now() + 10_000;
    while (seen.at(-1) !== expected) {
      if (Date.now() > deadline) throw new Error(`the watch did not report the files after ${what}; it reported ${seen.length} fingerprint(s)`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      });
    }
    assert.equal(watch.fingerprint(), expected);
    return expected;
  };
  return { watch, reaches };
}

test('the fingerprint covers svc.yml and profile files only, by content', async () => {
  const dir = path.join(root, 'content');
  await mkdir(dir);
  const empty = await landscapeFilesFingerprint(dir);
  assert.equal(await landscapeFilesFingerprint(path.join(root, 'absent')), empty);
  await writeFile(path.join(dir, 'README.md'), 'hello');
  await writeFile(path.join(dir, 'svc.Bad_Name.yml'), 'not a profile');
  assert.equal(await landscapeFilesFingerprint(dir), empty);
  await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n');
  const one = await landscapeFilesFingerprint(dir);
  assert.notEqual(one, empty);
  await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n'); // written again, same content
  assert.equal(await landscapeFilesFingerprint(dir), one);
  await writeFile(path.join(dir, 'svc.staging.yml'), 'schema: svc/v1\n');
  assert.notEqual(await landscapeFilesFingerprint(dir), one);
});

test('writing, saving by rename, adding a profile and removing the file each move the fingerprint', async () => {
  const dir = path.join(root, 'edits');
  await mkdir(dir);
  const { watch, reaches } = watched(dir);
  try {
    const first = await reaches('the start');
    await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n');
    const written = await reaches('writing svc.yml');
    assert.notEqual(written, first);
    await writeFile(path.join(dir, '.svc.yml.swp'), 'schema: svc/v1\nservices: {}\n');
    await rename(path.join(dir, '.svc.yml.swp'), path.join(dir, 'svc.yml'));
    const saved = await reaches('a rename over svc.yml');
    assert.notEqual(saved, written);
    await writeFile(path.join(dir, 'svc.ci.yml'), 'schema: svc/v1\n');
    assert.notEqual(await reaches('a new profile file'), saved);
    await unlink(path.join(dir, 'svc.yml'));
    await unlink(path.join(dir, 'svc.ci.yml'));
    assert.equal(await reaches('removing the files'), first);
  } finally {
    watch.close();
  }
});

test('a directory that appears later, or is removed and made again, is watched once it exists', async () => {
  const dir = path.join(root, 'later');
  const { watch, reaches } = watched(dir);
  try {
    const none = await reaches('the start');
    await mkdir(dir);
    await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n');
    assert.notEqual(await reaches('the directory and its svc.yml'), none);
    await rm(dir, { recursive: true });
    assert.equal(await reaches('removing the directory'), none);
    await mkdir(dir);
    await writeFile(path.join(dir, 'svc.yml'), 'schema: svc/v1\n# again\n');
    assert.notEqual(await reaches('the directory made again'), none);
  } finally {
    watch.close();
  }
});

// What a clone runs and how its failure reads, as pure functions: the git commands for a source, whether the
// source is a repository on this machine (bound read-only into the sandbox), and git's reason in a line.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../../agent/shell.ts';
import type { GitSource } from '../driver.ts';
import { POD_APP_DIR } from './sandbox.ts';

/** The path of a repository on this machine (an absolute path or a file:// URL), else undefined. */
export function localRepositoryPath(url: string): string | undefined {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch {
      return undefined;
    }
  }
  return path.isAbsolute(url) ? path.normalize(url) : undefined;
}

const COMMIT = /^[0-9a-f]{7,64}$/i;

/**
 * The shell text that clones `source` into /data/app. A branch or tag is cloned directly (git names a missing one:
 * "Remote branch nope not found in upstream origin"); a commit id is checked out after the clone.
 */
export function cloneScript(source: GitSource): string {
  const local = localRepositoryPath(source.url);
  const git = (...args: string[]) => ['git', '-c', 'advice.detachedHead=false', ...args].map(shellQuote).join(' ');
  const ref = source.ref?.trim();
  const clone = !ref || COMMIT.test(ref) ? git('clone', '--', source.url, POD_APP_DIR) : git('clone', '--branch', ref, '--', source.url, POD_APP_DIR);
  const checkout = ref && COMMIT.test(ref) ? ` && ${git('-C', POD_APP_DIR, 'checkout', '--detach', ref)}` : '';
  return `${local ? trustRepository(local) : ''}${clone}${checkout}`;
}

/**
 * The repository belongs to another user than the workspace UID: tell git it is meant, in a global config of the
 * sandbox's own /tmp (`-c safe.directory` does not reach the upload-pack that a local clone runs).
 */
function trustRepository(repository: string): string {
  const config = '/tmp/svc-clone.gitconfig';
  return `export GIT_CONFIG_GLOBAL=${config} && git config --global safe.directory ${shellQuote(repository)} && `;
}

/** git's last meaningful error line, without its `fatal:`/`error:` label; hints, progress and boilerplate are skipped. */
export function cloneFailureReason(stderr: string, exitCode: number | null): string {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !/^(hint:|Cloning into|remote: (Counting|Compressing|Enumerating|Total))/.test(line));
  const labelled = lines.filter((line) => /^(fatal|error):/.test(line));
  // "Could not read from remote repository." follows the line that says why
  const telling = labelled.filter((line) => !/Could not read from remote repository/.test(line));
  const chosen = telling.at(-1) ?? labelled.at(-1) ?? lines.at(-1);
  if (!chosen) return `git exited with code ${exitCode ?? 'unknown'}`;
  return chosen.replace(/^(fatal|error|bwrap):\s*/, '');
}

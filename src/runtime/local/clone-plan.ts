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
 * "Remote branch nope not found in upstream origin"); a commit id is checked out after the clone. Without a ref the
 * remote's HEAD decides, and a HEAD that names no branch is settled by `checkoutWhenHeadDangles`.
 */
export function cloneScript(source: GitSource): string {
  const local = localRepositoryPath(source.url);
  const git = (...args: string[]) => ['git', '-c', 'advice.detachedHead=false', ...args].map(shellQuote).join(' ');
  const ref = source.ref?.trim();
  const clone = !ref || COMMIT.test(ref) ? git('clone', '--', source.url, POD_APP_DIR) : git('clone', '--branch', ref, '--', source.url, POD_APP_DIR);
  const after = !ref ? ` && ${checkoutWhenHeadDangles}` : COMMIT.test(ref) ? ` && ${git('-C', POD_APP_DIR, 'checkout', '--detach', ref)}` : '';
  return `${local ? trustRepository(local) : ''}${credentialSetup(source)}${clone}${after}`;
}

const CREDENTIAL_FILE = '/tmp/svc-git-credential';
const SSH_KEY_FILE = '/tmp/svc-ssh-key';
/** The workspace user's own known hosts (ssh expands `~` from the passwd entry: /data/home on the volume). */
const KNOWN_HOSTS_FILE = '~/.ssh/known_hosts';

/**
 * How the creator's credential reaches git, for this run only: the clone's standard input (`cloneInput`) is
 * written to a file of the sandbox's own /tmp (a tmpfs that ends with it), readable by the workspace UID alone,
 * and named to git through the environment: a credential helper that answers for the credential's host only
 * (git asks it again after a redirect to another host), or the key ssh uses. The secret is never in a command
 * line, and the helper is set through GIT_CONFIG_* variables, so nothing is written to the clone's .git/config.
 * ssh accepts a host key it has not seen and refuses one that differs from the host's /etc/ssh/ssh_known_hosts,
 * where operators pin their git hosts; the key it accepts is kept in the workspace's HOME (~/.ssh/known_hosts), so
 * that `git push` in the workspace trusts the host the clone came from instead of asking (or failing without a
 * terminal), and a later change of that key is refused there.
 */
function credentialSetup(source: GitSource): string {
  const credential = source.credential;
  if (credential === undefined) return '';
  if (credential.kind === 'https') {
    const helper = `!f() { test "$1" = get || exit 0; grep -qxF host=${credential.host} || exit 0; cat ${CREDENTIAL_FILE}; }; f`;
    return `(umask 077 && cat > ${CREDENTIAL_FILE}) && export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=credential.helper GIT_CONFIG_VALUE_0= GIT_CONFIG_KEY_1=credential.helper GIT_CONFIG_VALUE_1=${shellQuote(helper)} && `;
  }
  const ssh = ['ssh', `-o IdentitiesOnly=yes -o IdentityAgent=none -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile=${KNOWN_HOSTS_FILE}`];
  const knownHostsDir = `mkdir -p -m 700 "$HOME/.ssh" && `;
  if (credential.kind === 'ssh') return `${knownHostsDir}(umask 077 && cat > ${SSH_KEY_FILE}) && export GIT_SSH_COMMAND=${shellQuote([...ssh, '-i', SSH_KEY_FILE].join(' '))} && `;
  // none over ssh: the same ssh without a key, so that the server's refusal is what fails (not an unknown host key)
  if (credential.transport === 'ssh') return `${knownHostsDir}export GIT_SSH_COMMAND=${shellQuote(ssh.join(' '))} && `;
  return '';
}

/** What the clone reads on its standard input: the credential's secret part (see `credentialSetup`). */
export function cloneInput(source: GitSource): string | undefined {
  const credential = source.credential;
  if (credential?.kind === 'https') return `username=${credential.username}\npassword=${credential.password}\n`;
  if (credential?.kind === 'ssh') return credential.privateKeyFile;
  return undefined;
}

/**
 * A remote HEAD naming a branch that does not exist (a bare repository made with `master` as its default, then
 * pushed only `main`) lets `git clone` succeed with nothing checked out. Its only branch is then the one meant;
 * with several, the clone fails naming them, so that a ref can be chosen. A repository without any branch (new and
 * empty) is a clone of nothing to check out, and fine.
 */
const checkoutWhenHeadDangles = `{ git -C ${POD_APP_DIR} rev-parse -q --verify HEAD >/dev/null || {
  branches=$(git -C ${POD_APP_DIR} for-each-ref --format='%(refname:lstrip=3)' refs/remotes/origin/ | grep -vx HEAD)
  count=$(printf '%s' "$branches" | grep -c .)
  if [ "$count" -eq 1 ]; then git -C ${POD_APP_DIR} checkout -q --track "origin/$branches"
  elif [ "$count" -gt 1 ]; then
    echo "fatal: the repository's HEAD names the branch $(git -C ${POD_APP_DIR} symbolic-ref --short HEAD), which does not exist; give one of its branches as the ref: $(echo $branches | sed 's/ /, /g')" >&2
    exit 1
  fi
}; }`;

/**
 * The repository belongs to another user than the workspace UID: tell git it is meant, in a global config of the
 * sandbox's own /tmp (`-c safe.directory` does not reach the upload-pack that a local clone runs). git checks the
 * directory it opens: the path itself for a bare repository, `<path>/.git` for one with a work tree.
 */
export function trustRepository(repository: string): string {
  const config = '/tmp/svc-clone.gitconfig';
  const trust = (directory: string) => `git config --global --add safe.directory ${shellQuote(directory)}`;
  return `export GIT_CONFIG_GLOBAL=${config} && ${trust(repository)} && ${trust(path.posix.join(repository, '.git'))} && `;
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

// Where the agent serves the editor's git credentials (editor-git.ts), and what the editor's environment gets to
// use them: known before the editor starts (main.ts starts it first of all), so this module imports next to nothing.
import os from 'node:os';
import path from 'node:path';

/** The directory of the agent's editor git files: one per agent process (a pod's /tmp is its own). */
export function editorGitDir(pid = process.pid): string {
  return path.join(os.tmpdir(), `svc-editor-git-${pid}`);
}

/** The files of the directory: sockets, the helper scripts, the `[user]` file. */
export const editorGitFiles = (dir: string) => ({
  credentialSocket: path.join(dir, 'credential.sock'),
  agentSocket: path.join(dir, 'ssh-agent.sock'),
  credentialHelper: path.join(dir, 'credential-helper'),
  ssh: path.join(dir, 'ssh'),
  identity: path.join(dir, 'identity.gitconfig'),
});

/** What the editor's environment gets (code-server's terminals inherit it): every git and ssh run asks the agent. */
export function editorGitEnv(dir: string): Record<string, string> {
  const f = editorGitFiles(dir);
  const config: Array<[string, string]> = [
    ['credential.helper', ''], // drops helpers configured before: only the agent answers
    ['credential.helper', f.credentialHelper],
    ['core.sshCommand', f.ssh],
    ['ssh.variant', 'ssh'], // the wrapper is OpenSSH's ssh: git need not probe it with -G
    ['include.path', f.identity],
  ];
  return {
    SSH_AUTH_SOCK: f.agentSocket,
    GIT_CONFIG_COUNT: String(config.length),
    ...Object.fromEntries(config.flatMap(([key, value], i) => [[`GIT_CONFIG_KEY_${i}`, key], [`GIT_CONFIG_VALUE_${i}`, value]])),
  };
}


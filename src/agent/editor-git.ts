// The editor's git credentials (code-server's Source Control view and its terminals): on paths that stay the same
// for as long as the agent runs, since code-server is one long-running process whose environment cannot change. An
// SSH agent socket and a credential socket (credential-cache's protocol) answer from the agent's memory for the one
// person who has the editor open (editor-git-state.ts); a credential helper and an ssh wrapper (short sh scripts,
// no secret in them) print why there is none when nobody or several people have it open, and stop git there. The
// name and e-mail for commits are a `[user]` file git includes, rewritten when the person changes: git reads its
// configuration at every run, so a running code-server's next commit takes the new person.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import type { WebSocket } from 'ws';
import { agentKeysOf, credentialCacheAnswer, listen, serveCredentialCache, serveSshAgent, type AgentKey } from './git-sockets.ts';
import { editorGitFiles } from './editor-git-paths.ts';
import { editorGitState, identityConfig, readEditorPeople, type EditorGitState, type EditorPerson } from './editor-git-state.ts';

/** The agent's refusal line, as the credential socket answers it when nobody or several people have the editor open. */
const REFUSED_KEY = 'svc-refused';

function credentialHelperScript(socket: string): string {
  return `#!/bin/sh
# git's credential helper in svc's editor: the agent answers for the one person who has the editor open
[ "$1" = get ] || exit 0
answer=$(git credential-cache --socket '${socket}' get) || exit 0
case $answer in
${REFUSED_KEY}=*) printf '%s\\n' "\${answer#${REFUSED_KEY}=}" >&2; echo quit=1 ;;
?*) printf '%s\\n' "$answer" ;;
esac
`;
}

function sshScript(socket: string): string {
  return `#!/bin/sh
# git's ssh in svc's editor: says why the agent's SSH key is nobody's, else OpenSSH's ssh
answer=$(printf 'protocol=ssh\\nhost=git\\n\\n' | git credential-cache --socket '${socket}' get 2>/dev/null)
case $answer in
${REFUSED_KEY}=*) printf '%s\\n' "\${answer#${REFUSED_KEY}=}" >&2; exit 255 ;;
esac
exec ssh "$@"
`;
}

/** The credential socket's answer in `state` to one request. */
export function editorCredentialAnswer(state: EditorGitState, request: string): string {
  if (!/^action=get$/m.test(request)) return '';
  if (state.kind === 'refused') return `${REFUSED_KEY}=${state.message.replace(/\n/g, ' ')}\n`;
  return credentialCacheAnswer(state.identity, request);
}

export interface EditorGit {
  /** A server's channel (stream-server.ts): its messages name the people it sees; its close forgets them. */
  accept(socket: WebSocket): void;
  close(): Promise<void>;
}

/** Serves the editor's git files in `dir` (made afresh) until closed. */
export async function serveEditorGit(dir: string, log: (line: string) => void): Promise<EditorGit> {
  if (dir.includes("'")) throw new Error(`the editor's git directory ${dir} has a quote in its path`);
  const f = editorGitFiles(dir);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const views = new Map<WebSocket, EditorPerson[]>();
  let state = editorGitState([]);
  let keys: AgentKey[] = [];
  let written = Promise.resolve();
  const writeIdentity = (text: string) => {
    written = written.then(async () => {
      const partial = `${f.identity}.partial`;
      await writeFile(partial, text, { mode: 0o600 });
      await rename(partial, f.identity);
    }).catch((error: Error) => log(`editor git: the identity file could not be written: ${error.message}`));
  };
  const changed = () => {
    const next = editorGitState(views.values());
    const was = state.kind === 'person' ? state.identity.email : state.message;
    const now = next.kind === 'person' ? next.identity.email : next.message;
    state = next;
    try {
      keys = next.kind === 'person' ? agentKeysOf(next.identity) : [];
    } catch (error) {
      keys = [];
      log(`editor git: the SSH key could not be read: ${(error as Error).message}`);
    }
    writeIdentity(identityConfig(next));
    if (was !== now) log(next.kind === 'person' ? `editor git: git in the editor acts as ${now}` : `editor git: no credentials in the editor (${now})`);
  };
  writeIdentity('');
  await writeFile(f.credentialHelper, credentialHelperScript(f.credentialSocket), { mode: 0o755 });
  await writeFile(f.ssh, sshScript(f.credentialSocket), { mode: 0o755 });
  const servers: net.Server[] = [serveCredentialCache((request) => editorCredentialAnswer(state, request)), serveSshAgent(() => keys)];
  await listen(servers[0], f.credentialSocket);
  await listen(servers[1], f.agentSocket);
  return {
    accept(socket) {
      views.set(socket, []);
      socket.on('message', (data: Buffer, binary: boolean) => {
        const people = binary ? undefined : readEditorPeople(data.toString('utf8'));
        if (!people) return void socket.close(1003, 'not a list of people');
        views.set(socket, people);
        changed();
      });
      socket.on('close', () => {
        views.delete(socket);
        changed();
      });
    },
    async close() {
      for (const socket of views.keys()) socket.terminate();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      await written;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

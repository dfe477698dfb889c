// The editor's git credentials from end to end on this machine, without a pod: the server's EditorPresence opens
// its channel to a real agent stream server (stream-server.ts over HTTP, the pod's token), the agent serves the
// editor's git files in a scratch directory, and the real git, ssh-add and credential-cache clients run with the
// editor's environment (editorGitEnv) while people come and go. The joining rule itself is pure (editor-git-state.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { CallerUser } from '../auth/credentials.ts';
import { generateSshKey } from '../git/ssh-key.ts';
import { EditorPresence } from '../router/editor-presence.ts';
import { connectAgent } from '../runtime/agent-connection.ts';
import { editorGitEnv } from './editor-git-paths.ts';
import { editorGitState, identityConfig, readEditorPeople } from './editor-git-state.ts';
import { serveEditorGit, type EditorGit } from './editor-git.ts';
import { AGENT_EDITOR_GIT_PATH, EDITOR_GIT_PROTOCOL, type ExecGitIdentity } from './stream-protocol.ts';
import { streamUpgrades } from './stream-server.ts';

const run = promisify(execFile);
const adaKey = generateSshKey('ada@example.com');
const ada: ExecGitIdentity = { name: 'Ada "A" Lovelace', email: 'ada@example.com', credentials: [{ host: 'git.example.com', username: 'ada', password: 'tok-ada' }], sshKey: adaKey.privatePem };
const bob: ExecGitIdentity = { name: 'Bob', email: 'bob@example.com', credentials: [{ host: 'git.example.com', username: 'bob', password: 'tok-bob' }] };
const user = (id: number, identity: ExecGitIdentity) => ({ id, email: identity.email, name: identity.name }) as CallerUser;

test('one person gives their identity; nobody or several refuse, naming who; the same person on two servers is one', () => {
  assert.deepEqual(editorGitState([[{ userId: 1, identity: ada }]]), { kind: 'person', identity: ada });
  assert.deepEqual(editorGitState([[{ userId: 1, identity: ada }], [{ userId: 1, identity: ada }]]), { kind: 'person', identity: ada });
  assert.match((editorGitState([]) as { message: string }).message, /^svc: nobody has this workspace's editor open; git credentials are given only when one person has it open — use `svc ssh` or the console terminal$/);
  const both = editorGitState([[{ userId: 2, identity: bob }], [{ userId: 1, identity: ada }]]);
  assert.equal(both.kind, 'refused');
  assert.match((both as { message: string }).message, /^svc: 2 people have this workspace's editor open \(ada@example\.com, bob@example\.com\);/);
  assert.equal(identityConfig(editorGitState([[{ userId: 1, identity: ada }]])), '[user]\n\tname = "Ada \\"A\\" Lovelace"\n\temail = "ada@example.com"\n');
  assert.equal(identityConfig(both), '');
  assert.equal(readEditorPeople('{"people":[{"userId":1}]}'), undefined);
  assert.equal(readEditorPeople('nonsense'), undefined);
  assert.deepEqual(readEditorPeople(JSON.stringify({ people: [{ userId: 2, identity: bob }] })), [{ userId: 2, identity: bob }]);
});

let dir: string;
let home: string;
let editorGit: EditorGit;
let agent: http.Server;
let presence: EditorPresence;
let env: Record<string, string>;
let endpoint: { host: string; port: number; token: string };
const TOKEN = 'pod-token-for-editor-git';

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-git-test-'));
  home = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-git-home-'));
  editorGit = await serveEditorGit(path.join(dir, 'git'), () => undefined);
  const upgrades = streamUpgrades({ token: TOKEN, workspaceDir: home, baseEnv: {}, editorGit: Promise.resolve(editorGit) });
  agent = http.createServer((_request, response) => response.writeHead(404).end());
  agent.on('upgrade', upgrades);
  await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
  endpoint = { host: '127.0.0.1', port: (agent.address() as AddressInfo).port, token: TOKEN };
  const identities = new Map([[1, ada], [2, bob]]);
  presence = new EditorPresence({
    driver: { openEditorGit: () => connectAgent(endpoint, AGENT_EDITOR_GIT_PATH, {}, EDITOR_GIT_PROTOCOL, { refusalBody: true }) },
    identityOf: async (caller) => identities.get(caller.id)!,
    log: () => undefined,
    retryMs: 20,
  });
  env = { PATH: process.env.PATH!, HOME: home, GIT_TERMINAL_PROMPT: '0', ...editorGitEnv(path.join(dir, 'git')) };
});

after(async () => {
  presence?.close();
  await new Promise((resolve) => agent?.close(resolve));
  await editorGit?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
});

/** git credential fill for git.example.com in the editor's environment: the user name, or what git said. */
async function fill(): Promise<string> {
  const answer = await run('sh', ['-c', `printf 'protocol=https\\nhost=git.example.com\\n\\n' | git credential fill`], { env }).then(
    ({ stdout }) => ({ text: stdout.match(/^username=(.*)$/m)?.[1] ?? '' }),
    (error: { stderr: string }) => ({ text: error.stderr }),
  );
  return answer.text;
}

async function settled(expected: RegExp): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = await fill();
    if (expected.test(now)) return now;
    if (Date.now() > deadline) throw new Error(`the editor's git never answered ${expected}; last: ${now}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const ws = { id: 7, uid: 0, storageGib: 0 };

test('the editor environment\'s git and ssh follow who has the editor open', async () => {
  assert.match(await fill(), /svc: nobody has this workspace's editor open/);
  const ssh = await run(editorGitEnv(path.join(dir, 'git'))['GIT_CONFIG_VALUE_2'], ['-o', 'BatchMode=yes', 'nowhere.invalid'], { env }).catch((error: { stderr: string; code: number }) => error);
  assert.equal((ssh as { code: number }).code, 255);
  assert.match((ssh as { stderr: string }).stderr, /^svc: nobody has this workspace's editor open/);

  const leaveAda = presence.opened(ws, user(1, ada));
  const leaveAdaAgain = presence.opened(ws, user(1, ada)); // a second window of hers
  assert.equal(await settled(/^ada$/), 'ada');
  assert.equal((await run('ssh-add', ['-L'], { env })).stdout.trim(), adaKey.publicKey);
  assert.match((await run('git', ['var', 'GIT_AUTHOR_IDENT'], { env })).stdout, /^Ada "A" Lovelace <ada@example\.com> /);

  const leaveBob = presence.opened(ws, user(2, bob));
  assert.match(await settled(/2 people/), /svc: 2 people have this workspace's editor open \(ada@example\.com, bob@example\.com\)/);
  const listed = (await run('ssh-add', ['-L'], { env }).catch((error: unknown) => error)) as { code?: number };
  assert.equal(listed.code, 1, 'the agent holds no key while two people have the editor open');
  assert.equal(await readFile(path.join(dir, 'git', 'identity.gitconfig'), 'utf8'), '');

  leaveAda();
  assert.match(await settled(/2 people/), /2 people/, 'her other window is still open');
  leaveAdaAgain();
  assert.equal(await settled(/^bob$/), 'bob');
  assert.match((await run('git', ['var', 'GIT_COMMITTER_IDENT'], { env })).stdout, /^Bob <bob@example\.com> /);
  assert.equal((await run('ssh-add', ['-L'], { env }).catch((error: { code: number }) => error) as { code?: number }).code, 1, 'bob has no key');

  leaveBob();
  assert.match(await settled(/nobody/), /svc: nobody has this workspace's editor open/);
  assert.deepEqual(presence.peopleOf(ws.id), []);
});

test('two servers: each sends the people it relays, the agent joins them; one server gone takes only its people', async () => {
  const second = new EditorPresence({
    driver: { openEditorGit: () => connectAgent(endpoint, AGENT_EDITOR_GIT_PATH, {}, EDITOR_GIT_PROTOCOL, { refusalBody: true }) },
    identityOf: async (caller) => (caller.id === 1 ? ada : bob),
    log: () => undefined,
  });
  const leaveAda = presence.opened(ws, user(1, ada));
  const leaveBob = second.opened(ws, user(2, bob));
  try {
    assert.match(await settled(/2 people/), /\(ada@example\.com, bob@example\.com\)/);
    second.close();
    assert.equal(await settled(/^ada$/), 'ada');
  } finally {
    leaveBob();
    leaveAda();
  }
  assert.match(await settled(/nobody/), /nobody/);
});

test('a channel that closes (its server gone) takes its people with it', async () => {
  const leave = presence.opened(ws, user(2, bob));
  assert.equal(await settled(/^bob$/), 'bob');
  presence.close();
  assert.match(await settled(/nobody/), /nobody/);
  leave();
});

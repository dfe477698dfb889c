// The git credentials of the person at the keyboard, served for one exec session from the agent's memory: an SSH
// agent socket (ssh-add -L, signing with their svc-made key) and a socket that speaks git's credential-cache
// protocol (`git credential-cache --socket`), answering with their token for its host only. Both live in a
// directory of the pod's /tmp made for the session and removed when it ends; nothing is written but the sockets.
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { publicKeyBlob } from '../git/ssh-key.ts';
import type { ExecGitIdentity } from './stream-protocol.ts';

const SSH_AGENT_FAILURE = 5;
const SSH_AGENTC_REQUEST_IDENTITIES = 11;
const SSH_AGENT_IDENTITIES_ANSWER = 12;
const SSH_AGENTC_SIGN_REQUEST = 13;
const SSH_AGENT_SIGN_RESPONSE = 14;

export interface GitSockets {
  /** What the session's commands get: SSH_AUTH_SOCK, the credential helper, the author and committer. */
  env: Record<string, string>;
  close(): Promise<void>;
}

function sshString(data: Buffer | string): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function agentMessage(type: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length + 1);
  return Buffer.concat([length, Buffer.from([type]), payload]);
}

function readString(buffer: Buffer, offset: number): { value: Buffer; next: number } | undefined {
  if (offset + 4 > buffer.length) return undefined;
  const length = buffer.readUInt32BE(offset);
  if (offset + 4 + length > buffer.length) return undefined;
  return { value: buffer.subarray(offset + 4, offset + 4 + length), next: offset + 4 + length };
}

export interface AgentKey {
  key: KeyObject;
  blob: Buffer;
  comment: string;
}

/** The answer of an SSH agent holding `keys` to one request (type and payload). */
export function sshAgentAnswer(keys: AgentKey[], type: number, payload: Buffer): Buffer {
  if (type === SSH_AGENTC_REQUEST_IDENTITIES) {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(keys.length);
    return agentMessage(SSH_AGENT_IDENTITIES_ANSWER, Buffer.concat([count, ...keys.flatMap((k) => [sshString(k.blob), sshString(k.comment)])]));
  }
  if (type === SSH_AGENTC_SIGN_REQUEST) {
    const blob = readString(payload, 0);
    const data = blob && readString(payload, blob.next);
    const key = blob && keys.find((k) => k.blob.equals(blob.value));
    if (!key || !data) return agentMessage(SSH_AGENT_FAILURE);
    const signature = sign(null, data.value, key.key);
    return agentMessage(SSH_AGENT_SIGN_RESPONSE, sshString(Buffer.concat([sshString('ssh-ed25519'), sshString(signature)])));
  }
  return agentMessage(SSH_AGENT_FAILURE); // adding, removing, locking, extensions: not for this agent
}

/** An SSH agent serving the keys `keys()` gives at each request (they may change while it runs). */
export function serveSshAgent(keys: () => AgentKey[]): net.Server {
  return net.createServer((socket) => {
    let pending = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(0);
        if (length < 1 || length > 256 * 1024) return void socket.destroy();
        if (pending.length < 4 + length) return;
        socket.write(sshAgentAnswer(keys(), pending[4], pending.subarray(5, 4 + length)));
        pending = pending.subarray(4 + length);
      }
    });
  });
}

/** git credential-cache's request (`action=get`, then the credential's `key=value` lines), answered for its host. */
export function credentialCacheAnswer(identity: ExecGitIdentity, request: string): string {
  const fields = new Map(request.split('\n').filter((line) => line.includes('=')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const));
  if (fields.get('action') !== 'get' || !/^https?$/.test(fields.get('protocol') ?? '')) return '';
  const host = (fields.get('host') ?? '').toLowerCase();
  const credential = identity.credentials.find((c) => c.host === host);
  return credential ? `username=${credential.username}\npassword=${credential.password}\n` : '';
}

/** A socket speaking credential-cache's protocol: each request (read to its end) gets `answer(request)`. */
export function serveCredentialCache(answer: (request: string) => string): net.Server {
  return net.createServer((socket) => {
    let request = '';
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      request += chunk;
      if (request.length > 64 * 1024) socket.destroy();
    });
    socket.on('end', () => socket.end(answer(request)));
  });
}

/** The SSH agent's view of a person's key (none without one). */
export function agentKeysOf(identity: ExecGitIdentity): AgentKey[] {
  return identity.sshKey ? [{ key: createPrivateKey(identity.sshKey), blob: publicKeyBlob(identity.sshKey), comment: identity.email }] : [];
}

export const listen = (server: net.Server, file: string) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });

/** Opens the session's sockets; `close` ends them and removes their directory. */
export async function openGitSockets(identity: ExecGitIdentity): Promise<GitSockets> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-git-'));
  const agentFile = path.join(dir, 'ssh-agent.sock');
  const credentialFile = path.join(dir, 'credential.sock');
  const keys = agentKeysOf(identity);
  const servers = [serveSshAgent(() => keys), serveCredentialCache((request) => credentialCacheAnswer(identity, request))];
  try {
    await listen(servers[0], agentFile);
    await listen(servers[1], credentialFile);
  } catch (error) {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const person = { GIT_AUTHOR_NAME: identity.name, GIT_AUTHOR_EMAIL: identity.email, GIT_COMMITTER_NAME: identity.name, GIT_COMMITTER_EMAIL: identity.email };
  return {
    env: {
      ...person,
      SSH_AUTH_SOCK: agentFile,
      // command-line scope: after every config file; the empty value drops helpers configured before
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
      GIT_CONFIG_KEY_1: 'credential.helper',
      GIT_CONFIG_VALUE_1: `cache --socket ${credentialFile}`,
    },
    async close() {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

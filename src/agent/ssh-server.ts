// The workspace's SSH endpoint (issue 38): an ssh2 server run over one stream the server relays (stream-protocol.ts,
// AGENT_SSH_PATH), never on a port. The stream is authorized per person by the API already (their key or session and
// workspace.exec), so the SSH layer takes `none` or any public key, for the workspace user's name only. Sessions run as
// an exec stream's do (ssh-session.ts); forwarding stays inside the pod (ssh-forwarding.ts).
import os from 'node:os';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import { openGitSockets, type GitSockets } from './git-sockets.ts';
import type { ExecContext } from './exec-session.ts';
import { acceptDirectTcpip, RemoteForwards } from './ssh-forwarding.ts';
import { serveSshSession } from './ssh-session.ts';
import type { AgentSshRequest } from './stream-protocol.ts';

/**
 * AES-GCM first, and no chacha20-poly1305 (OpenSSH's first choice): Node's OpenSSL does AES-GCM, while ssh2 does
 * poly1305 in JavaScript without its optional native binding, which the agent bundle leaves out (3-4× slower scp).
 */
const CIPHERS: ssh2.CipherAlgorithm[] = ['aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr', 'aes192-ctr', 'aes256-ctr'];

/** The login names a session may ask for: the pod user's (its passwd entry, and USER as the pod says it). */
export function workspaceLogins(env: Record<string, string>): Set<string> {
  const names = new Set<string>();
  try {
    names.add(os.userInfo().username);
  } catch {
    // no passwd entry for the UID
  }
  if (env.USER) names.add(env.USER);
  return names;
}

/** Serves one SSH connection on `transport` until either side ends it. */
export function serveSshConnection(transport: Duplex, request: AgentSshRequest, context: ExecContext): void {
  const logins = workspaceLogins({ ...context.baseEnv, ...request.env });
  let gitSockets: Promise<GitSockets | undefined> = Promise.resolve(undefined);
  const server = new ssh2.Server({ hostKeys: [request.hostKey], ident: 'svc', algorithms: { cipher: CIPHERS } }, (client) => {
    client.on('error', () => client.end());
    client.on('authentication', (auth) => {
      if (!logins.has(auth.username)) return auth.reject([]);
      if (auth.method === 'none' || auth.method === 'publickey' || auth.method === 'keyboard-interactive' || auth.method === 'password') return auth.accept();
      auth.reject(['none', 'publickey']);
    });
    client.on('ready', () => {
      gitSockets = request.git ? openGitSockets(request.git).catch(() => undefined) : Promise.resolve(undefined);
      const forwards = new RemoteForwards(client);
      client.on('session', (accept) => {
        void gitSockets.then((sockets) => serveSshSession(client, accept(), { ...context, baseEnv: { ...context.baseEnv, ...request.env, ...(sockets?.env ?? {}) } }));
      });
      client.on('tcpip', (accept, reject, info) => acceptDirectTcpip(accept, reject, info));
      client.on('request', (accept, reject, name, info) => forwards.request(accept, reject, name, info));
      client.on('close', () => {
        forwards.close();
        void gitSockets.then((sockets) => sockets?.close());
      });
    });
  });
  transport.on('error', () => transport.destroy());
  server.injectSocket(transport as unknown as import('node:net').Socket);
}

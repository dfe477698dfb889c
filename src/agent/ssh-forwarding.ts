// Forwarding over a workspace's SSH connection (ssh-server.ts), all of it inside the pod: `direct-tcpip` (ssh -L)
// dials the pod's loopback only, the reach of `svc port-forward`; `tcpip-forward` (ssh -R) listens in the pod's
// network namespace (its loopback unless the client names another address of the pod); a forwarded agent
// (`auth-agent-req@openssh.com`) is a socket in a directory of the pod's /tmp that the session's SSH_AUTH_SOCK names.
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { AcceptConnection, Connection, RejectConnection, ServerChannel, TcpipBindInfo, TcpipRequestInfo } from 'ssh2';
import { listen } from './git-sockets.ts';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '0:0:0:0:0:0:0:1']);

/** Whether `ssh -L` may reach host: the pod's loopback only (a workspace's services listen there). */
export const isWorkspaceDestination = (host: string) => LOOPBACK.has(host.toLowerCase()) || /^127\./.test(host);

function join(channel: Duplex, socket: net.Socket): void {
  socket.on('error', () => channel.destroy());
  channel.on('error', () => socket.destroy());
  channel.pipe(socket).on('finish', () => undefined);
  socket.pipe(channel);
  channel.on('close', () => socket.destroy());
  socket.on('close', () => channel.destroy());
}

export function acceptDirectTcpip(accept: AcceptConnection<ServerChannel>, reject: RejectConnection, info: TcpipRequestInfo): void {
  if (!isWorkspaceDestination(info.destIP)) return reject();
  const socket = net.connect({ host: info.destIP === 'localhost' ? '127.0.0.1' : info.destIP, port: info.destPort });
  socket.once('error', () => reject());
  socket.once('connect', () => {
    socket.removeAllListeners('error');
    join(accept(), socket);
  });
}

/** The connection's `ssh -R` listeners, closed with it. */
export class RemoteForwards {
  private readonly listeners = new Map<string, net.Server>();

  constructor(private readonly client: Connection) {}

  request(accept: ((port?: number) => void) | undefined, reject: (() => void) | undefined, name: string, info: TcpipBindInfo): void {
    const key = (address: string, port: number) => `${address}:${port}`;
    if (name === 'cancel-tcpip-forward') {
      const server = this.listeners.get(key(info.bindAddr, info.bindPort));
      this.listeners.delete(key(info.bindAddr, info.bindPort));
      server?.close();
      return accept?.();
    }
    if (name !== 'tcpip-forward') return reject?.();
    // "" and "localhost" mean the loopback; "*" and "0.0.0.0" every address of the pod (its own namespace)
    const host = info.bindAddr === '' || info.bindAddr === 'localhost' ? '127.0.0.1' : info.bindAddr === '*' ? '0.0.0.0' : info.bindAddr;
    const server = net.createServer((socket) => {
      const bound = server.address() as net.AddressInfo;
      this.client.forwardOut(info.bindAddr, bound.port, socket.remoteAddress ?? '127.0.0.1', socket.remotePort ?? 0, (error, channel) => {
        if (error) return socket.destroy();
        join(channel, socket);
      });
    });
    server.once('error', () => reject?.());
    server.listen({ host, port: info.bindPort }, () => {
      const port = (server.address() as net.AddressInfo).port;
      this.listeners.set(key(info.bindAddr, info.bindPort === 0 ? port : info.bindPort), server);
      accept?.(info.bindPort === 0 ? port : undefined);
    });
  }

  close(): void {
    for (const server of this.listeners.values()) server.close();
    this.listeners.clear();
  }
}

// ssh2 opens no `auth-agent@openssh.com` channel from a server on its own; its protocol writer does (openssh_authAgent),
// and the channel table answers the client's confirmation like any other channel it asked for.
type Internals = {
  _chanMgr: { add(callback: (error: Error | undefined, channel: Duplex) => void): number };
  _protocol: { openssh_authAgent(channel: number, window: number, packet: number): void };
};
const AGENT_WINDOW = 2 * 1024 * 1024;
const AGENT_PACKET = 32 * 1024;

function openAgentChannel(client: Connection, callback: (error: Error | undefined, channel: Duplex) => void): void {
  const internals = client as unknown as Internals;
  const wrapper = Object.assign((error: Error | undefined, channel: Duplex) => callback(error, channel), { type: 'auth-agent@openssh.com' });
  const local = internals._chanMgr.add(wrapper);
  if (local === -1) return callback(new Error('no free channels'), undefined as unknown as Duplex);
  internals._protocol.openssh_authAgent(local, AGENT_WINDOW, AGENT_PACKET);
}

/** A socket whose every connection is a channel to the client's agent; `close` removes it. */
export async function forwardAgent(client: Connection): Promise<{ socket: string; close: () => void }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-ssh-agent-'));
  const file = path.join(dir, 'agent.sock');
  const server = net.createServer((socket) => {
    openAgentChannel(client, (error, channel) => {
      if (error) return socket.destroy();
      join(channel, socket);
    });
  });
  await listen(server, file);
  return {
    socket: file,
    close: () => {
      server.close();
      void rm(dir, { recursive: true, force: true });
    },
  };
}

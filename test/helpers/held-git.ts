// A git:// server (git daemon) behind a door the test holds shut: while held, connections are accepted and kept
// waiting, so a clone is under way for as long as the test wants (a server can be killed during it). The door is
// at the host's own address (a clone as root runs in the pod's network, where loopback is the pod's own): servers
// of a test that runs as root allow it with `--egress-allow <host address>/32` (`heldGitEgressAllow`).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { freeLoopbackPort } from '../../src/core/loopback.ts';
import { createBareRepository, type BareRepository } from './git.ts';
import { hostAddress } from './internet-host.ts';
import { until } from './wait.ts';

export interface HeldGitServer {
  /** git://<host address>:PORT/repo.git (127.0.0.1 unless root) */
  url: string;
  repository: BareRepository;
  /** Connections kept waiting so far. */
  held(): number;
  /** Lets every later connection through (those held are closed). */
  open(): void;
  close(): Promise<void>;
}

/** The server setting that lets pods (and clones) reach the door, as root; nothing otherwise. */
export async function heldGitEgressAllow(): Promise<Record<string, string>> {
  return process.getuid?.() === 0 ? { SVC_EGRESS_ALLOW: `${await hostAddress()}/32` } : {};
}

export async function startHeldGitServer(files: Record<string, string>): Promise<HeldGitServer> {
  const repository = await createBareRepository(files);
  const root = path.dirname(repository.path);
  const daemonPort = await freeLoopbackPort();
  const daemon: ChildProcess = spawn('git', ['daemon', '--reuseaddr', '--export-all', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${daemonPort}`, root], { stdio: 'ignore' });
  await until(() => new Promise<true | undefined>((resolve) => {
    const socket = net.connect(daemonPort, '127.0.0.1', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(undefined));
  }), 'git daemon to listen', 10_000);
  let holding = true;
  const waiting = new Set<net.Socket>();
  let heldCount = 0;
  const door = net.createServer((socket) => {
    socket.on('error', () => undefined);
    if (holding) {
      heldCount++;
      waiting.add(socket);
      socket.on('close', () => waiting.delete(socket));
      return;
    }
    const upstream = net.connect(daemonPort, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  const doorHost = process.getuid?.() === 0 ? await hostAddress() : '127.0.0.1';
  await new Promise<void>((resolve) => door.listen(0, doorHost, resolve));
  const port = (door.address() as net.AddressInfo).port;
  return {
    url: `git://${doorHost}:${port}/${path.basename(repository.path)}`,
    repository,
    held: () => heldCount,
    open() {
      holding = false;
      for (const socket of waiting) socket.destroy();
    },
    async close() {
      for (const socket of waiting) socket.destroy();
      await new Promise((resolve) => door.close(resolve));
      daemon.kill();
      await repository.remove();
    },
  };
}

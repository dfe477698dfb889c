// Event streams reach svc from its nginx over a Unix socket instead of loopback TCP. Every event is written once per
// stream to nginx, a thousand writes for a thousand subscribers, and a write to a Unix socket costs the kernel about
// half of one to a loopback TCP connection (no TCP stack on either side); nginx's reads get cheaper likewise
// (docs/events.md, bench/events). The socket's connections go to svc's HTTP server like those of its loopback port.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface UnixSocketListener {
  /** The socket's path (for nginx's upstream). */
  path: string;
  /** Stops listening and removes the socket (connections still open belong to the HTTP server, which ends them). */
  close(): Promise<void>;
}

/** Connections of nginx opening a thousand streams at once must not be refused (a full backlog answers 502). */
const BACKLOG = 4096;
/** Linux's limit on a socket's path (108 bytes with the closing NUL); Node would bind a cut-off path silently. */
const MAX_PATH_BYTES = 107;

/** Listens in a directory of its own under `parent`; refuses a path too long for a socket (svc then stays on TCP). */
export async function listenOnUnixSocket(server: http.Server, parent = os.tmpdir()): Promise<UnixSocketListener> {
  const longest = path.join(parent, 'svc-events-XXXXXX', 'events.sock');
  if (Buffer.byteLength(longest) > MAX_PATH_BYTES) throw new Error(`${longest} is too long for a Unix socket`);
  // Its own directory, which nginx's workers (`nobody` when svc runs as root) may pass through.
  const dir = await mkdtemp(path.join(parent, 'svc-events-'));
  await chmod(dir, 0o755);
  const socketPath = path.join(dir, 'events.sock');
  const listener = net.createServer((socket) => {
    // A peer of this socket is a process of this machine, trusted as a loopback peer is (svc takes the client's
    // address from nginx's X-Real-IP only from loopback); a Unix socket has no address of its own.
    Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
    server.emit('connection', socket);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ path: socketPath, backlog: BACKLOG }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    // Any local process may connect, as to svc's loopback port.
    await chmod(socketPath, 0o666);
  } catch (error) {
    listener.close();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    path: socketPath,
    close: async () => {
      listener.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

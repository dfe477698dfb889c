// `svc port-forward`: a local listener per forwarded port; each TCP connection gets a WebSocket stream of its own
// (src/core/channel-protocol.ts, port forwarding), opened with the signed-in key. Closing either end closes the other.
import type { Workspace } from '../../sdk/src/index.ts';
import net from 'node:net';
import type { WebSocket } from 'ws';
import { ForwardChannel, frame, parseFrame, sendPaced } from '../core/channel-protocol.ts';
import type { Cli } from './command.ts';
import { CliError, ExitCode, usageError } from './errors.ts';
import { formatProblem } from './output.ts';
import { label } from './targets.ts';

export interface ForwardSpec {
  service?: string;
  port: number;
  /** 0: any free port. */
  local: number;
}

const SERVICE = /^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$/;

/** `5432`, `5432:15432`, `db:5432`, `db:5432:0`. */
export function parseForwardSpec(text: string): ForwardSpec {
  const parts = text.split(':');
  const service = parts.length > 1 && !/^\d+$/.test(parts[0]) ? parts.shift() : undefined;
  const [port, local, ...rest] = parts;
  const isPort = (value: string | undefined, min: number) => value !== undefined && /^\d+$/.test(value) && Number(value) >= min && Number(value) <= 65535;
  if (service !== undefined && !SERVICE.test(service)) throw usageError(`"${service}" in "${text}" is not a service name`);
  if (rest.length > 0 || !isPort(port, 1) || (local !== undefined && !isPort(local, 0))) {
    throw usageError(`"${text}" is not [SERVICE:]PORT[:LOCAL] (ports from 1 to 65535; LOCAL 0 picks a free one)`);
  }
  return { service, port: Number(port), local: local === undefined ? Number(port) : Number(local) };
}

export async function forwardPorts(cli: Cli, workspace: Workspace, forwards: ForwardSpec[], options: { address: string; replica?: number }): Promise<number> {
  const api = await cli.api();
  let fatal: CliError | undefined;
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const servers: net.Server[] = [];
  /** Open local connections: Ctrl-C closes them (a listener's close waits for its connections, a psql session idles for ever). */
  const connections = new Set<net.Socket>();

  const open = (forward: ForwardSpec) => {
    const query = { port: forward.port, service: forward.service || undefined, replica: forward.service ? options.replica : undefined };
    return api.openStream('/api/v1/workspaces/{ws}/port-forward', { path: { ws: workspace.id }, query });
  };

  const carry = (forward: ForwardSpec, connection: net.Socket) => {
    connections.add(connection);
    connection.on('close', () => connections.delete(connection));
    connection.pause();
    connection.on('error', () => connection.destroy());
    open(forward).then(
      (socket) => {
        // stopped while the stream opened: nothing to carry any more
        if (connection.destroyed) socket.close(1000);
        else joinStreams(connection, socket, (text) => cli.note(`svc: port-forward ${describe(forward)}: ${text}\n`), (code, reason) => {
          // the server closed it because the key or the role no longer allows it: no later connection would work
          fatal ??= new CliError(`port-forward ${describe(forward)}: ${reason}`, code === 4401 ? ExitCode.notSignedIn : ExitCode.problem);
          stop();
        });
      },
      (error: unknown) => {
        connection.destroy();
        if (!(error instanceof CliError)) throw error;
        cli.note(error.problem ? formatProblem(error.problem) : `svc: ${error.message}\n`);
        // a key or a role that does not allow it will not allow the next connection either
        if (error.exitCode === ExitCode.notSignedIn || error.problem?.status === 403 || error.problem?.status === 404) {
          fatal = error;
          stop();
        }
      },
    );
  };

  try {
    for (const forward of forwards) {
      const server = net.createServer((connection) => carry(forward, connection));
      servers.push(server);
      const local = await listen(server, options.address, forward.local);
      cli.say(`Forwarding ${options.address}:${local} -> ${describe(forward)} of ${label(workspace)}\n`);
    }
  } catch (error) {
    servers.forEach((server) => server.close());
    throw new CliError(`could not listen on ${options.address}: ${(error as Error).message}`, ExitCode.problem);
  }
  cli.say('Press Ctrl-C to stop.\n');
  const onSignal = () => stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await stopped;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const closed = Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  // each connection's end closes its stream too (joinStreams)
  for (const connection of connections) connection.destroy();
  await closed;
  if (fatal) throw new CliError(fatal.message, fatal.exitCode);
  return ExitCode.ok;
}

const describe = (forward: ForwardSpec) => (forward.service ? `${forward.service}:${forward.port}` : `port ${forward.port}`);

function listen(server: net.Server, address: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve((server.address() as net.AddressInfo).port));
  });
}

/** Bytes both ways; the pod's first frame on each channel (the port number) is not data; `revoked` hears of 4401 and 4403. */
function joinStreams(connection: net.Socket, socket: WebSocket, warn: (text: string) => void, revoked: (code: number, reason: string) => void): void {
  const opened = new Set<number>();
  socket.on('message', (message: Buffer) => {
    const parsed = parseFrame(message);
    if (!parsed) return;
    if (!opened.has(parsed.channel)) {
      opened.add(parsed.channel);
      return;
    }
    if (parsed.channel === ForwardChannel.data && connection.writable) {
      if (!connection.write(parsed.data)) {
        socket.pause();
        connection.once('drain', () => socket.resume());
      }
    } else if (parsed.channel === ForwardChannel.error) warn(parsed.data.toString());
  });
  connection.on('data', (chunk: Buffer) => sendPaced(socket, frame(ForwardChannel.data, chunk), connection));
  connection.on('end', () => socket.readyState === socket.OPEN && socket.close(1000));
  connection.on('close', () => socket.readyState === socket.OPEN && socket.close(1000));
  socket.on('error', () => connection.destroy());
  socket.on('close', (code: number, reason: Buffer) => {
    connection.end();
    // 4401, 4403: the caller lost the right while the stream was open (docs/api.md)
    if (code === 4401 || code === 4403) revoked(code, reason.toString() || `closed with ${code}`);
  });
  socket.resume();
  connection.resume();
}

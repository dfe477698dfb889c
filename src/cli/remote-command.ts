// The CLI's end of an exec stream (src/core/channel-protocol.ts): what the pod writes goes to stdout and stderr,
// stdin goes to the pod, a terminal is put in raw mode (so Ctrl-C and every key reach the remote shell) and its size
// follows the window. Resolves with the command's exit code.
import type { WebSocket } from 'ws';
import { ExecChannel, frame, parseFrame, readExecStatus, resizeFrame, sendPaced, type TerminalSize } from '../core/channel-protocol.ts';
import { CliError, ExitCode, unreachable } from './errors.ts';

export interface RemoteIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** Send stdin (and its end). */
  sendStdin: boolean;
  /** A remote terminal: raw mode on a local one, resizes sent as the window changes. */
  tty: boolean;
}

export function terminalSize(stdout: NodeJS.WriteStream): TerminalSize | undefined {
  return stdout.isTTY && stdout.columns && stdout.rows ? { cols: stdout.columns, rows: stdout.rows } : undefined;
}

export function runRemoteCommand(socket: WebSocket, io: RemoteIo): Promise<number> {
  return new Promise((resolve, reject) => {
    let outcome: { exitCode: number } | { error: string } | undefined;
    const undo: Array<() => void> = [];

    socket.on('message', (message: Buffer) => {
      const parsed = parseFrame(message);
      if (!parsed) return;
      if (parsed.channel === ExecChannel.stdout) writePaced(io.stdout, parsed.data, socket);
      else if (parsed.channel === ExecChannel.stderr) writePaced(io.stderr, parsed.data, socket);
      else if (parsed.channel === ExecChannel.status) outcome = readExecStatus(parsed.data);
    });

    if (io.sendStdin) {
      const rawMode = io.tty && io.stdin.isTTY;
      if (rawMode) {
        io.stdin.setRawMode(true);
        undo.push(() => io.stdin.setRawMode(false));
      }
      const onData = (chunk: Buffer) => sendPaced(socket, frame(ExecChannel.stdin, chunk), io.stdin);
      const onEnd = () => socket.readyState === socket.OPEN && socket.send(frame(ExecChannel.close, Buffer.from([ExecChannel.stdin])));
      io.stdin.on('data', onData);
      io.stdin.on('end', onEnd);
      undo.push(() => {
        io.stdin.off('data', onData);
        io.stdin.off('end', onEnd);
        io.stdin.pause();
      });
    }

    if (io.tty && io.stdout.isTTY) {
      const onResize = () => {
        const size = terminalSize(io.stdout);
        if (size && socket.readyState === socket.OPEN) socket.send(resizeFrame(size));
      };
      io.stdout.on('resize', onResize);
      undo.push(() => io.stdout.off('resize', onResize));
    }

    socket.resume();
    socket.on('error', () => undefined); // 'close' follows and tells what happened
    socket.on('close', (code: number, reason: Buffer) => {
      undo.forEach((step) => step());
      const done = () => {
        if (outcome && 'exitCode' in outcome) return resolve(outcome.exitCode);
        if (outcome) return reject(new CliError(`the command did not run: ${outcome.error}`, ExitCode.problem));
        const why = reason.toString() || `the stream closed with code ${code}`;
        reject(unreachable(`the connection to the workspace broke before the command ended: ${why}`));
      };
      // what the command wrote reaches the terminal or pipe before svc exits
      io.stdout.write('', () => io.stderr.write('', done));
    });
  });
}

/** Writes to a local stream; a slow reader (a pipe into `less`) holds the stream back. */
function writePaced(out: NodeJS.WriteStream, data: Buffer, socket: WebSocket): void {
  if (!out.write(data)) {
    socket.pause();
    out.once('drain', () => socket.resume());
  }
}

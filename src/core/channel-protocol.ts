// The wire format of shells and forwarded ports over WebSocket, the same on every leg (CLI or console -> API ->
// the pod's agent): Kubernetes' channel protocols, so that a kubernetes driver can relay the kubelet's own exec and
// port-forward streams unchanged. Each binary message is one frame: a channel byte, then the data.
//
// Exec (`v5.channel.k8s.io`): 0 stdin, 1 stdout, 2 stderr, 3 the final status (a Kubernetes `Status` as JSON),
// 4 terminal size (`{"Width":80,"Height":24}`), 255 close one stream (`[255, 0]`: end of stdin).
// Port forwarding (`v4.channel.k8s.io`): 0 data, 1 error text; the first frame the pod sends on each channel is
// the port as two bytes, little-endian.

export const EXEC_PROTOCOL = 'v5.channel.k8s.io';
export const PORT_FORWARD_PROTOCOL = 'v4.channel.k8s.io';
/** The workspace's SSH endpoint (issue 38): each binary message carries the next bytes of one SSH connection, unframed. */
export const SSH_PROTOCOL = 'svc.ssh.v1';

export const ExecChannel = { stdin: 0, stdout: 1, stderr: 2, status: 3, resize: 4, close: 255 } as const;
export const ForwardChannel = { data: 0, error: 1 } as const;

export function frame(channel: number, data: Uint8Array | string = new Uint8Array()): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = channel;
  out.set(body, 1);
  return out;
}

/** The channel and data of a message; undefined for an empty one. */
export function parseFrame(message: Buffer): { channel: number; data: Buffer } | undefined {
  if (message.length === 0) return undefined;
  return { channel: message[0], data: message.subarray(1) };
}

/** The frames that open each channel of a forwarded port. */
export function portPreamble(port: number): Buffer[] {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16LE(port);
  return [frame(ForwardChannel.data, bytes), frame(ForwardChannel.error, bytes)];
}

/** The subset of Kubernetes' metav1.Status that exec sends on channel 3. */
export interface ExecStatus {
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: { causes: Array<{ reason: string; message: string }> };
}

export function exitStatus(exitCode: number): ExecStatus {
  if (exitCode === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: ${exitCode}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] },
  };
}

/** The command could not run at all (not found, the pod has no terminal library, ...). */
export function failureStatus(message: string): ExecStatus {
  return { metadata: {}, status: 'Failure', message, reason: 'InternalError' };
}

/** The exit code a status says, or undefined with the failure's message when the command did not run. */
export function readExecStatus(data: Buffer | string): { exitCode: number } | { error: string } {
  let status: Partial<ExecStatus>;
  try {
    status = JSON.parse(data.toString()) as Partial<ExecStatus>;
  } catch {
    return { error: 'the pod sent a status that is not JSON' };
  }
  if (status.status === 'Success') return { exitCode: 0 };
  const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
  if (status.reason === 'NonZeroExitCode' && code !== undefined && /^\d+$/.test(code)) return { exitCode: Number(code) };
  return { error: status.message ?? 'the command failed' };
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

export function resizeFrame(size: TerminalSize): Buffer {
  return frame(ExecChannel.resize, JSON.stringify({ Width: size.cols, Height: size.rows }));
}

/** A resize message's size, or undefined when it is not one a terminal can take. */
export function readResize(data: Buffer): TerminalSize | undefined {
  try {
    const { Width, Height } = JSON.parse(data.toString()) as { Width?: unknown; Height?: unknown };
    return isDimension(Width) && isDimension(Height) ? { cols: Width, rows: Height } : undefined;
  } catch {
    return undefined;
  }
}

export const isDimension = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 1000;


/** What pacing needs of a WebSocket (the `ws` package's, in the browser a wrapper). */
export interface FrameSink {
  readonly bufferedAmount: number;
  readonly readyState: number;
  send(data: Buffer, callback?: (error?: Error) => void): void;
}

/** A source that can wait: a stream, a terminal, a TCP socket. */
export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

const HIGH_WATER_BYTES = 1024 * 1024;
const paused = new WeakSet<Pausable>();

/**
 * Sends a frame; when the socket has more than 1 MiB waiting, the source pauses until what was sent has gone out,
 * so that a fast command or download never piles up in memory behind a slow client.
 */
export function sendPaced(sink: FrameSink, message: Buffer, source?: Pausable): void {
  if (sink.readyState !== 1) return;
  sink.send(message, () => {
    if (source && paused.has(source) && sink.bufferedAmount < HIGH_WATER_BYTES / 4) {
      paused.delete(source);
      source.resume();
    }
  });
  if (source && !paused.has(source) && sink.bufferedAmount > HIGH_WATER_BYTES) {
    paused.add(source);
    source.pause();
  }
}

/**
 * ws's `generateMask` for streams whose frames need no masking key: an all-zero key, which ws skips on both ends
 * (docs/decisions.md "Unmasked frames for SSH and the agent streams"). Masking defends proxies that misread HTTP
 * from payloads a browser's script chose; an SSH stream's bytes are ciphertext, and svc's own hops to the pods'
 * agents pass no such proxy.
 */
export const zeroMask = (mask: Buffer): void => void mask.fill(0);

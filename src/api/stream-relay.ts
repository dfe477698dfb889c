// The API's leg of a shell or forwarded port: frames pass unchanged between the caller's WebSocket and the pod's
// (both speak the same channel protocol), paced so that neither side piles up in memory. Pings keep proxies from
// closing a quiet shell and find callers that went away; either side's close closes the other.
import type { WebSocket } from 'ws';
import { sendPaced } from '../core/channel-protocol.ts';

const PING_EVERY_MS = 30_000;

/** Messages the pod sends before the caller's side is connected, kept for it. */
export function holdMessages(pod: WebSocket): () => Buffer[] {
  const held: Buffer[] = [];
  const keep = (message: Buffer) => void held.push(message);
  pod.on('message', keep);
  return () => {
    pod.off('message', keep);
    return held;
  };
}

export interface RelayHooks {
  /** Called every ping interval while the stream is open (the workspace is in use). */
  onTick?: () => void;
  onClose?: () => void;
}

/** Relays until either side closes; the answer closes both sides with a code and reason of the server's own. */
export function relayStreams(caller: WebSocket, pod: WebSocket, held: Buffer[], hooks: RelayHooks = {}): (code: number, reason: string) => void {
  for (const message of held) sendPaced(caller, message, pod);
  pod.on('message', (message: Buffer) => sendPaced(caller, message, pod));
  caller.on('message', (message: Buffer) => sendPaced(pod, message, caller));
  let answered = true;
  const timer = setInterval(() => {
    if (!answered) return caller.terminate();
    answered = false;
    caller.ping();
    hooks.onTick?.();
  }, PING_EVERY_MS);
  caller.on('pong', () => (answered = true));
  let closed = false;
  const closeBoth = (code: number, reason: string) => {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    close(caller, code, reason);
    close(pod, code, reason);
    hooks.onClose?.();
  };
  pod.on('close', (code: number, reason: Buffer) => closeBoth(sendableCode(code, 'pod'), reason.toString() || (code === 1006 ? "the pod's stream broke" : '')));
  caller.on('close', (code: number, reason: Buffer) => closeBoth(sendableCode(code, 'caller'), reason.toString()));
  caller.on('error', () => caller.terminate());
  pod.on('error', () => pod.terminate());
  if (pod.readyState !== pod.OPEN) closeBoth(1011, "the pod's stream ended");
  return closeBoth;
}

/** A close code one may send on: 1005 (none given) is a normal close, 1006 (connection lost) an error. */
function sendableCode(code: number, from: 'pod' | 'caller'): number {
  if (code === 1005) return 1000;
  if (code === 1006) return from === 'pod' ? 1011 : 1001;
  return code >= 3000 || [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011].includes(code) ? code : 1000;
}

function close(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState === socket.OPEN) socket.close(code, reason.slice(0, 120));
  else if (socket.readyState === socket.CONNECTING) socket.terminate();
}

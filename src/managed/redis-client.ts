// A few Redis commands over one short TCP connection, authenticated with the instance's password (AUTH, never on a
// command line): enough for readiness (PING), settings (CONFIG GET/SET) and tests. resp.ts is the protocol.
import net from 'node:net';
import { decodeReply, encodeCommand, RespError, type RespValue } from './resp.ts';

export interface RedisTarget {
  address: string;
  port: number;
  password: string;
}

/** The server answered AUTH (or a command whose reply the caller needs) with an error. */
export class RedisReplyError extends Error {
  constructor(readonly reply: RespError) {
    super(reply.message);
  }
}

/**
 * Sends AUTH then `commands` pipelined and answers their replies (errors included, as RespError), within
 * `timeoutMs`. Throws RedisReplyError when AUTH is refused, an Error when the server cannot be reached.
 */
export function redisCommands(target: RedisTarget, commands: readonly string[][], timeoutMs = 5000): Promise<RespValue[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.address, port: target.port });
    let received = Buffer.alloc(0);
    const replies: RespValue[] = [];
    const expected = commands.length + 1;
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (error) reject(error);
      else resolve(replies.slice(1));
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no answer from ${target.address}:${target.port} within ${timeoutMs} ms`)));
    socket.once('error', (error) => finish(error));
    socket.once('close', () => finish(new Error(`the connection to ${target.address}:${target.port} closed after ${replies.length} of ${expected} replies`)));
    socket.once('connect', () => socket.write(Buffer.concat([['AUTH', target.password], ...commands].map(encodeCommand))));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      let decoded: ReturnType<typeof decodeReply>;
      try {
        while (replies.length < expected && (decoded = decodeReply(received))) {
          replies.push(decoded.value);
          received = received.subarray(decoded.next);
        }
      } catch (error) {
        return finish(error as Error);
      }
      if (replies[0] instanceof RespError) return finish(new RedisReplyError(replies[0]));
      if (replies.length === expected) finish(undefined);
    });
  });
}

/** The one reply of `command`; an error reply throws RedisReplyError. */
export async function redisCommand(target: RedisTarget, command: string[], timeoutMs = 5000): Promise<RespValue> {
  const [reply] = await redisCommands(target, [command], timeoutMs);
  if (reply instanceof RespError) throw new RedisReplyError(reply);
  return reply;
}

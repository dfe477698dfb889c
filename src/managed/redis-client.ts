// A few Redis commands over one short connection of node-redis (the `redis` package), authenticated with the
// instance's password (AUTH at connect, never on a command line): enough for readiness (PING), settings (CONFIG
// GET/SET) and tests. RESP2, so that replies keep their plain shapes (CONFIG GET answers a flat array).
import { createClient, ErrorReply } from 'redis';

export { ErrorReply };

export interface RedisTarget {
  address: string;
  port: number;
  password: string;
}

/** A reply as RESP2 gives it: a status or bulk string, an integer, nil, an array, or the server's error reply. */
export type RedisReply = string | number | null | ErrorReply | RedisReply[];

/** The first word of an error reply (`WRONGPASS` of `WRONGPASS invalid username-password pair`). */
export const replyCode = (error: unknown): string | undefined => (error instanceof ErrorReply ? error.message.split(' ', 1)[0] : undefined);

/**
 * Connects (AUTH with the password), sends `commands` pipelined and answers their replies, error replies
 * included as ErrorReply, all within `timeoutMs`. Throws the ErrorReply when AUTH is refused, an Error when the
 * server cannot be reached or does not answer in time.
 */
export async function redisCommands(target: RedisTarget, commands: readonly string[][], timeoutMs = 5000): Promise<RedisReply[]> {
  const client = createClient({
    RESP: 2,
    password: target.password,
    disableClientInfo: true,
    socket: { host: target.address, port: target.port, connectTimeout: timeoutMs, reconnectStrategy: false },
  });
  // Failures reach connect() and the commands' promises; the event would only repeat them.
  client.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${target.address}:${target.port} within ${timeoutMs} ms`)), timeoutMs);
  });
  const exchange = async () => {
    await client.connect();
    // Issued in the same tick, node-redis writes them as one pipeline.
    return Promise.all(commands.map((command) => client.sendCommand<RedisReply>(command).catch((error: unknown) => {
      if (error instanceof ErrorReply) return error;
      throw error;
    })));
  };
  try {
    return await Promise.race([exchange(), deadline]);
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/** The one reply of `command`; an error reply is thrown (ErrorReply). */
export async function redisCommand(target: RedisTarget, command: string[], timeoutMs = 5000): Promise<RedisReply> {
  const [reply] = await redisCommands(target, [command], timeoutMs);
  if (reply instanceof ErrorReply) throw reply;
  return reply;
}

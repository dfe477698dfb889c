// Whether a NATS server admits a client as a user with its password: a connection of nats.js
// (@nats-io/transport-node), which performs the client protocol's handshake (the server's INFO, CONNECT with the
// credentials, PING answered by PONG), then closed. An authorization refusal is told apart from a server that
// does not answer. (A peer that accepts the connection but never sends INFO keeps nats.js's socket open after the
// timeout, until that peer closes it: callers ask the monitoring endpoint first, so a server that gets here speaks.)
import { AuthorizationError, connect, TimeoutError } from '@nats-io/transport-node';

export type NatsReadiness = { ready: true; refused?: undefined } | { ready: false; reason: string; refused?: boolean };

export interface NatsCredentials {
  address: string;
  port: number;
  user: string;
  password: string;
}

/** Connects, authenticates and round-trips within `timeoutMs`. `refused` is the server's own authorization refusal. */
export async function checkNatsClient(target: NatsCredentials, timeoutMs = 2000): Promise<NatsReadiness> {
  try {
    const connection = await connect({
      servers: `${target.address}:${target.port}`,
      user: target.user,
      pass: target.password,
      name: 'svc readiness check',
      timeout: timeoutMs,
      reconnect: false,
    });
    await connection.close();
    return { ready: true };
  } catch (error) {
    if (error instanceof AuthorizationError) return { ready: false, reason: error.message, refused: true };
    if (error instanceof TimeoutError) return { ready: false, reason: `no answer within ${timeoutMs} ms` };
    const cause = (error as Error).cause as Error | undefined;
    return { ready: false, reason: cause?.message ?? (error as Error).message };
  }
}

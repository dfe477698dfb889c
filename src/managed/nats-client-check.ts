// Whether a NATS server accepts a client as a user with its password: the client protocol's own handshake (the
// server's INFO, then CONNECT with the credentials and PING; PONG means admitted, `-ERR` says why not). Only this
// handshake is needed to call an instance ready, so it is spoken directly rather than through a client library.
import net from 'node:net';

export type NatsReadiness = { ready: true; info: Record<string, unknown> } | { ready: false; reason: string; refused?: boolean };

export interface NatsCredentials {
  address: string;
  port: number;
  user: string;
  password: string;
}

/** Connects, authenticates and pings within `timeoutMs`. `refused` is the server's own authorization refusal. */
export function checkNatsClient(target: NatsCredentials, timeoutMs = 2000): Promise<NatsReadiness> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.address, port: target.port });
    let text = '';
    let info: Record<string, unknown> | undefined;
    const finish = (answer: NatsReadiness) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => finish({ ready: false, reason: `no answer within ${timeoutMs} ms` }), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('error', (error) => finish({ ready: false, reason: error.message }));
    socket.on('close', () => finish({ ready: false, reason: 'the server closed the connection' }));
    socket.on('data', (chunk: string) => {
      text += chunk;
      for (let end = text.indexOf('\r\n'); end >= 0; end = text.indexOf('\r\n')) {
        const line = text.slice(0, end);
        text = text.slice(end + 2);
        if (line.startsWith('INFO ') && !info) {
          try {
            info = JSON.parse(line.slice(5)) as Record<string, unknown>;
          } catch {
            return finish({ ready: false, reason: 'the server sent a malformed INFO' });
          }
          const connect = { user: target.user, pass: target.password, verbose: false, pedantic: false, name: 'svc readiness check', lang: 'node', version: '1', protocol: 1 };
          socket.write(`CONNECT ${JSON.stringify(connect)}\r\nPING\r\n`);
        } else if (line === 'PONG' && info) {
          return finish({ ready: true, info });
        } else if (line.startsWith('-ERR')) {
          const reason = line.slice(4).trim().replace(/^'(.*)'$/, '$1');
          return finish({ ready: false, reason, refused: /authorization|authentication/i.test(reason) });
        }
      }
    });
  });
}

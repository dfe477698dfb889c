// A minimal NATS client for tests, speaking the client protocol over a socket: CONNECT with a user and password,
// then requests (PUB with a reply inbox, the MSG that answers it), e.g. to JetStream's API subjects. Enough to
// check a managed instance end to end without a client library.
import net from 'node:net';

export interface NatsTarget {
  address: string;
  port: number;
  user: string;
  password: string;
}

export class NatsTestClient {
  private buffer = Buffer.alloc(0);
  private waiting = new Map<string, (payload: string) => void>();
  private next = 0;
  private failure?: Error;

  private constructor(private readonly socket: net.Socket) {}

  /** Connects and authenticates; rejects with the server's `-ERR` text when it refuses. */
  static connect(target: NatsTarget, timeoutMs = 5000): Promise<NatsTestClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: target.address, port: target.port });
      const client = new NatsTestClient(socket);
      const timer = setTimeout(() => (socket.destroy(), reject(new Error('no PONG in time'))), timeoutMs);
      let connected = false;
      socket.on('error', (error) => (clearTimeout(timer), reject(error)));
      socket.on('data', (chunk: Buffer) => {
        client.buffer = Buffer.concat([client.buffer, chunk]);
        client.read((line) => {
          if (line.startsWith('INFO ') && !connected) {
            connected = true;
            socket.write(`CONNECT ${JSON.stringify({ user: target.user, pass: target.password, verbose: false, pedantic: false, headers: false })}\r\nPING\r\n`);
          } else if (line === 'PONG') {
            clearTimeout(timer);
            resolve(client);
          } else if (line.startsWith('-ERR')) {
            clearTimeout(timer);
            client.failure = new Error(line);
            socket.destroy();
            reject(client.failure);
          } else if (line === 'PING') {
            socket.write('PONG\r\n');
          }
        });
      });
    });
  }

  /** Reads whole lines and messages from the buffer: `MSG <subject> <sid> [reply] <bytes>` and its payload. */
  private read(onLine: (line: string) => void): void {
    for (;;) {
      const end = this.buffer.indexOf('\r\n');
      if (end < 0) return;
      const line = this.buffer.subarray(0, end).toString('utf8');
      if (line.startsWith('MSG ')) {
        const parts = line.split(' ');
        const size = Number(parts.at(-1));
        if (this.buffer.length < end + 2 + size + 2) return;
        const payload = this.buffer.subarray(end + 2, end + 2 + size).toString('utf8');
        this.buffer = this.buffer.subarray(end + 2 + size + 2);
        this.waiting.get(parts[1])?.(payload);
        this.waiting.delete(parts[1]);
        continue;
      }
      this.buffer = this.buffer.subarray(end + 2);
      onLine(line);
    }
  }

  /** Publishes `body` to `subject` with a reply inbox and answers the reply's payload. */
  request(subject: string, body: string, timeoutMs = 5000): Promise<string> {
    const inbox = `_INBOX.svc-test.${this.next++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${subject} in time`)), timeoutMs);
      this.waiting.set(inbox, (payload) => (clearTimeout(timer), resolve(payload)));
      const sid = String(this.next);
      this.socket.write(`SUB ${inbox} ${sid}\r\nUNSUB ${sid} 1\r\nPUB ${subject} ${inbox} ${Buffer.byteLength(body)}\r\n${body}\r\n`);
    });
  }

  /** A JetStream API request: the JSON answer. */
  async jetstream<T = Record<string, any>>(api: string, body: unknown = {}): Promise<T> {
    return JSON.parse(await this.request(`$JS.API.${api}`, JSON.stringify(body))) as T;
  }

  close(): void {
    this.socket.end();
  }
}

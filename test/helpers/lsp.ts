// A minimal Language Server Protocol client over a child's stdio (Content-Length framed JSON-RPC), enough to drive a
// real language server in tests: requests, notifications, and waiting for a notification the server sends.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

interface Message {
  id?: number;
  method?: string;
  params?: any;
  result?: any;
  error?: { message: string };
}

export class LspClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  private readonly notifications: Message[] = [];
  private readonly waiters = new Set<() => void>();

  constructor(
    command: string,
    args: string[],
    /** Answers to requests the server sends (e.g. workspace/configuration); others are answered null. */
    private readonly answers: Record<string, (params: any) => unknown> = {},
  ) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString()) as Message;
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.handle(message);
    }
  }

  private handle(message: Message): void {
    if (message.id !== undefined && message.method) {
      const answer = this.answers[message.method];
      this.write({ id: message.id, result: answer ? answer(message.params) : null }); // registrations, progress: accepted
    } else if (message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result);
    } else {
      this.notifications.push(message);
      this.waiters.forEach((wake) => wake());
    }
  }

  private write(message: object): void {
    const body = JSON.stringify({ jsonrpc: '2.0', ...message });
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  request<T = any>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.write({ method, params });
  }

  /** The first notification `method` whose params match, as the server sends it (waits without a timer). */
  notification(method: string, match: (params: any) => boolean): Promise<any> {
    return new Promise((resolve) => {
      const look = () => {
        const found = this.notifications.find((n) => n.method === method && match(n.params));
        if (found) {
          this.waiters.delete(look);
          resolve(found.params);
        }
      };
      this.waiters.add(look);
      look();
    });
  }

  async close(): Promise<void> {
    await this.request('shutdown', null).catch(() => undefined);
    this.notify('exit', null);
    if (this.child.exitCode === null) await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

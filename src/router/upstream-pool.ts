// Connections to upstreams kept per address (`host:port`) between requests, as an http.Agent with keep-alive
// would: at most MAX_SOCKETS in use per address (further requests wait their turn), MAX_FREE_SOCKETS kept idle,
// the last one freed used first. The exchange on a connection (proxy.ts) gets its bytes and its end.
import net from 'node:net';

/** What runs on a connection: one request and its answer. */
export interface Exchanger {
  readonly upstream: { host: string; port: number; lookup?: net.LookupFunction };
  /** The connection is this exchange's now: write the request. */
  start(connection: Connection): void;
  onData(chunk: Buffer): void;
  /** The upstream ended its side. */
  onEnd(): void;
  /** The connection closed (after an error too). */
  onClose(): void;
}

/** Per upstream address, like the Agent this replaces: at most this many requests at once, the rest wait. */
const MAX_SOCKETS = 256;
const MAX_FREE_SOCKETS = 64;
/** A kept connection idle longer than this is not reused: servers close idle ones (Node after 5 s). */
const IDLE_REUSE_MS = 4_000;

export class Connection {
  exchange: Exchanger | undefined;
  idleSince = 0;
  uses = 0;
  /** Closed because its replica went away (forgetUpstream): not a connection worth trying again. */
  forgotten = false;
  constructor(
    readonly socket: net.Socket,
    readonly pool: Pool,
  ) {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    socket.on('data', (chunk: Buffer) => (this.exchange ? this.exchange.onData(chunk) : socket.destroy()));
    socket.on('end', () => this.exchange?.onEnd());
    socket.on('error', () => undefined); // 'close' follows
    socket.on('close', () => {
      pool.forget(this);
      this.exchange?.onClose();
    });
  }
}

export class Pool {
  private readonly free: Connection[] = [];
  private readonly busy = new Set<Connection>();
  private readonly waiting: Exchanger[] = [];

  constructor(
    private readonly key: string,
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** Gives the exchange a connection now or when one is released; `fresh` skips kept ones (a retry). */
  acquire(exchange: Exchanger, fresh = false): void {
    if (this.busy.size >= MAX_SOCKETS) {
      this.waiting.push(exchange);
      return;
    }
    const now = Date.now();
    let connection: Connection | undefined;
    while (!fresh && (connection = this.free.pop())) {
      if (now - connection.idleSince < IDLE_REUSE_MS && !connection.socket.destroyed) break;
      connection.socket.destroy();
      connection = undefined;
    }
    connection ??= new Connection(net.connect({ host: this.host, port: this.port, lookup: exchange.upstream.lookup }), this);
    connection.socket.ref();
    this.busy.add(connection);
    exchange.start(connection);
  }

  /** The exchange is over and the connection can carry the next request. */
  release(connection: Connection): void {
    connection.exchange = undefined;
    this.busy.delete(connection);
    const next = this.waiting.shift();
    if (next) {
      this.busy.add(connection);
      next.start(connection);
    } else if (this.free.length < MAX_FREE_SOCKETS) {
      connection.idleSince = Date.now();
      connection.socket.unref();
      this.free.push(connection);
    } else {
      connection.socket.destroy();
    }
  }

  forget(connection: Connection): void {
    const at = this.free.indexOf(connection);
    if (at >= 0) this.free.splice(at, 1);
    if (this.busy.delete(connection)) this.startWaiting();
    if (this.free.length === 0 && this.busy.size === 0 && this.waiting.length === 0 && pools.get(this.key) === this) pools.delete(this.key);
  }

  /** A waiting exchange gave up (its client left or it timed out). */
  withdraw(exchange: Exchanger): void {
    const at = this.waiting.indexOf(exchange);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  private startWaiting(): void {
    const next = this.waiting.shift();
    if (next) this.acquire(next);
  }

  destroyAll(): void {
    for (const connection of [...this.free, ...this.busy]) {
      connection.forgotten = true;
      connection.socket.destroy();
    }
  }
}

export const pools = new Map<string, Pool>();

export function poolFor(upstream: { host: string; port: number }): Pool {
  const key = `${upstream.host}:${upstream.port}`;
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = new Pool(key, upstream.host, upstream.port)));
  return pool;
}

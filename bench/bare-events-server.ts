// The reference of bench/events: the least a Node server does to fan an event out. It listens on one channel of
// the database and writes each notification's payload as one SSE frame to every open response, one corked write
// each (no event row read, no permission check). `DATABASE_URL` names the database; `BARE_CHANNEL` the channel.
import http from 'node:http';
import pg from 'pg';

const streams = new Set<http.ServerResponse>();
let nextId = 1;

const server = http.createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  response.flushHeaders();
  request.socket.setNoDelay(true);
  streams.add(response);
  response.on('close', () => streams.delete(response));
  write(response, `id: 0\nevent: ready\ndata: {"type":"ready"}\n\n`);
});

function write(response: http.ServerResponse, frame: string): void {
  response.cork();
  response.write(frame);
  response.uncork();
}

const listener = new pg.Client({ connectionString: process.env.DATABASE_URL });
listener.on('notification', (message) => {
  const received = process.hrtime.bigint();
  const frame = `id: ${nextId++}\nevent: team.updated\ndata: ${message.payload}\n\n`;
  for (const response of streams) write(response, frame);
  // What bench/events reads to split the latency into its phases (monotonic ms, like the bench's clients).
  process.stdout.write(`events-trace ${Number(received) / 1e6} ${Number(process.hrtime.bigint()) / 1e6} ${streams.size}\n`);
});
await listener.connect();
await listener.query(`LISTEN ${process.env.BARE_CHANNEL ?? 'bench_bare_events'}`);

server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => {
  for (const response of streams) response.end();
  void listener.end();
  server.close(() => process.exit(0));
});

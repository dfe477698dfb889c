// A worker process of bench/events: holds a share of the SSE subscribers (of svc and of the reference alike) on raw
// sockets, so what the bench measures is the servers, not one client event loop parsing 2,000 streams. Each
// subscriber notes the monotonic time (process.hrtime, the same clock in every process of the machine) at which a
// round's event arrived; when every subscriber of a group has a round, the worker sends the times to the bench.
// Messages in: { open: { group, url, tokens } }. Out: { opened: group }, { round, group, times, busyMs }, { failed }.
import net from 'node:net';
import { performance } from 'node:perf_hooks';

interface OpenMessage {
  open: { group: string; url: string; tokens: Array<string | undefined> };
}

/** Rounds are told apart by the milliseconds of their event's `at`, within the bench's year 2030. */
const MARKER = Buffer.from('"at":"2030-01-01T');
const BASE = Date.parse('2030-01-01T00:00:00.000Z');

class Group {
  readonly counts = new Map<number, number>();
  readonly times = new Map<number, number[]>();
  size = 0;
  ready = 0;
  constructor(readonly name: string) {}

  received(round: number, at: number): void {
    let times = this.times.get(round);
    if (!times) this.times.set(round, (times = []));
    times.push(at);
    if (times.length === this.size) {
      this.times.delete(round);
      const busyMs = elu();
      process.send!({ round, group: this.name, times, busyMs });
    }
  }
}

let lastElu = performance.eventLoopUtilization();
/** Milliseconds this process's event loop was busy since the last report. */
function elu(): number {
  const now = performance.eventLoopUtilization();
  const delta = performance.eventLoopUtilization(now, lastElu);
  lastElu = now;
  return delta.active;
}

function subscribe(group: Group, url: URL, token: string | undefined): void {
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  socket.setNoDelay(true);
  let head = true;
  let ready = false;
  let tail: Buffer = Buffer.alloc(0);
  socket.on('connect', () => {
    const auth = token ? `authorization: Bearer ${token}\r\n` : '';
    socket.write(`GET /api/v1/events HTTP/1.1\r\nhost: ${url.host}\r\n${auth}\r\n`);
  });
  socket.on('data', (chunk: Buffer) => {
    const at = Number(process.hrtime.bigint()) / 1e6;
    if (head) {
      if (!chunk.subarray(0, 12).equals(Buffer.from('HTTP/1.1 200'))) fail(`${group.name}: GET /events answered ${chunk.subarray(0, 40).toString()}`);
      head = false;
    }
    // A marker split across two reads is found in the tail kept from the previous one.
    const text = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    if (!ready && text.includes('event: ready')) {
      ready = true;
      group.ready++;
      if (group.ready === group.size) process.send!({ opened: group.name });
    }
    let from = 0;
    let index: number;
    while ((index = text.indexOf(MARKER, from)) >= 0) {
      const end = index + MARKER.length + 13; // HH:MM:SS.mmmZ
      if (end > text.length) break;
      const round = Date.parse(`2030-01-01T${text.toString('latin1', index + MARKER.length, end)}`) - BASE;
      group.received(round, at);
      from = end;
    }
    tail = text.subarray(Math.max(from, text.length - MARKER.length - 13));
  });
  socket.on('error', (error) => fail(`${group.name}: ${error.message}`));
  socket.on('close', () => {
    if (!closing) fail(`${group.name}: a stream ended`);
  });
}

let closing = false;
function fail(message: string): void {
  if (closing) return;
  closing = true;
  process.send!({ failed: message });
}

const groups = new Map<string, Group>();
process.on('message', (message: OpenMessage | { close: true }) => {
  if ('close' in message) {
    closing = true;
    process.exit(0);
  }
  const { group: name, url, tokens } = message.open;
  const group = new Group(name);
  groups.set(name, group);
  group.size = tokens.length;
  for (const token of tokens) subscribe(group, new URL(url), token);
});

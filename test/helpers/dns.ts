// A DNS server on loopback for tests: Debian's dnsmasq answering the TXT records (and A records to 127.0.0.1) a
// test sets. dnsmasq reads TXT records only at start (SIGHUP re-reads hosts files, not txt-record lines), so a change
// starts it again on the same UDP port; `set` resolves once the new records are answered.
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import net from 'node:net';
import { until } from './wait.ts';

export interface TestDns {
  /** `127.0.0.1:<port>`, for --dns-resolver. */
  address: string;
  /** Replaces the TXT records: name -> values. */
  set(txt: Record<string, string[]>): Promise<void>;
  stop(): Promise<void>;
}

/** A port free on loopback for UDP and TCP alike: dnsmasq listens on both and exits when either is taken. */
async function freeDnsPort(): Promise<number> {
  for (;;) {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const { port } = socket.address();
    const tcp = net.createServer();
    const tcpFree = await new Promise<boolean>((resolve) => tcp.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)));
    if (tcpFree) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    if (tcpFree) return port;
  }
}

/** `zones`: domains dnsmasq answers for itself (A records to 127.0.0.1, nothing forwarded). */
export async function startDns(zones: string[]): Promise<TestDns> {
  const port = await freeDnsPort();
  const address = `127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const stopChild = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
  };
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([address]);
  const set = async (txt: Record<string, string[]>) => {
    await stopChild();
    const args = ['-k', '--conf-file=/dev/null', '--no-hosts', '--no-resolv', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--pid-file=', '--user=root'];
    for (const zone of zones) args.push(`--local=/${zone}/`, `--address=/${zone}/127.0.0.1`);
    for (const [name, values] of Object.entries(txt)) for (const value of values) args.push(`--txt-record=${name},${value}`);
    const started = spawn('dnsmasq', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = started;
    let stderr = '';
    started.stderr!.on('data', (chunk) => (stderr += chunk));
    // Answers with the new records (or a missing name's NXDOMAIN/NODATA) once it listens.
    await until(async () => {
      if (started.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr}`);
      for (const [name, values] of Object.entries(txt)) {
        const found = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
        if (!values.every((v) => found.includes(v))) return undefined;
      }
      await resolver.resolve4(zones[0]);
      return true;
    }, 'dnsmasq to answer', 10_000);
  };
  await set({});
  return { address, set, stop: stopChild };
}

// bench/ssh: the workspace SSH endpoint (issue 38) against OpenSSH's own sshd on loopback, in the same run and
// alternating: the wall time of `ssh HOST true` (medians) and the throughput of `scp` of 100 MB (medians). Both go
// through the real OpenSSH client; svc's path is ssh → svc ssh --stdio → the server → the pod's agent. Targets:
// ≤ 1.5× sshd's round trip, ≥ 0.7× its throughput. Needs root (a workspace pod, sshd).
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { RuntimeDriver } from '../src/runtime/driver.ts';
import { createLocalDriver } from '../src/runtime/local/index.ts';
import { createPerson } from '../test/helpers/client.ts';
import { runSvc } from '../test/helpers/process.ts';
import { startTestServer } from '../test/helpers/server.ts';
import { operationFinished, until } from '../test/helpers/wait.ts';
import { removeWorkspaces } from '../test/helpers/workspaces.ts';
import { median } from './http-load.ts';
import { recordResult } from './summary.ts';

const run = promisify(execFile);
const ROUND_TRIP_TARGET = 1.5;
const THROUGHPUT_TARGET = 0.7;
const SCP_BYTES = 100 * 1024 * 1024;

function timed(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const start = performance.now();
  const child = spawn(args[0], args.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => child.on('exit', (code) => (code === 0 ? resolve((performance.now() - start) / 1000) : reject(new Error(`${args.join(' ')}: ${code} ${stderr}`)))));
}

/** OpenSSH's sshd on 127.0.0.1 with a key of its own for `key`'s holder. */
async function startReferenceSshd(dir: string, key: string): Promise<{ port: number; stop: () => void }> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_key')]);
  await writeFile(path.join(dir, 'authorized_keys'), await readFile(`${key}.pub`, 'utf8'), { mode: 0o600 });
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const chosen = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(chosen));
    });
  });
  const conf = path.join(dir, 'sshd_config');
  await writeFile(conf, [`ListenAddress 127.0.0.1`, `Port ${port}`, `HostKey ${dir}/host_key`, `PidFile ${dir}/sshd.pid`, `AuthorizedKeysFile ${dir}/authorized_keys`,
    'StrictModes no', 'UsePAM no', 'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PermitRootLogin prohibit-password',
    'Subsystem sftp /usr/lib/openssh/sftp-server', ''].join('\n'));
  const sshd = spawn('/usr/sbin/sshd', ['-D', '-f', conf, '-E', path.join(dir, 'sshd.log')], { stdio: 'ignore' });
  await until(async () => new Promise<true | undefined>((resolve) => net.connect(port, '127.0.0.1').on('connect', function (this: net.Socket) { this.destroy(); resolve(true); }).on('error', () => resolve(undefined))), 'sshd', 20_000);
  return { port, stop: () => sshd.kill() };
}

export async function benchSsh(rounds = Number(process.env.BENCH_SSH_ROUNDS) || 9): Promise<void> {
  let driver: RuntimeDriver | undefined;
  let workspace = 0;
  const server = await startTestServer({ driver: ({ dataDir, clock }) => (driver = createLocalDriver({ dataDir, clock })) });
  const home = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-ssh-'));
  let sshd: { port: number; stop: () => void } | undefined;
  try {
    const person = await createPerson(server.admin, 'bench-ssh@example.com');
    const org = (await person.key.post('/orgs', { name: 'Bench' })).body.id;
    const team = (await person.key.post('/teams', { org_id: org, name: 'Bench' })).body.id;
    const created = await person.key.post('/workspaces', { team_id: team, name: 'bench' });
    workspace = Number(created.body.target.split('/')[2]);
    if ((await operationFinished(person.key, created.body.id)).state !== 'succeeded') throw new Error('the workspace did not start');
    const env = { ...process.env, SVC_URL: server.url, SVC_TOKEN: person.key.auth.token!, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') };
    const configured = await runSvc(['config-ssh'], env);
    if (configured.code !== 0) throw new Error(configured.stderr);
    const key = path.join(home, 'key');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    sshd = await startReferenceSshd(await mkdtemp(path.join(home, 'sshd-')), key);
    const config = path.join(home, '.ssh', 'config');
    await writeFile(config, `${await readFile(config, 'utf8')}\nHost reference\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  User root\n  IdentityFile ${key}\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n`);
    const file = path.join(home, 'payload');
    await writeFile(file, randomBytes(SCP_BYTES));
    const hosts = { svc: 'bench.bench.svc', sshd: 'reference' };
    const trips: Record<string, number[]> = { svc: [], sshd: [] };
    const copies: Record<string, number[]> = { svc: [], sshd: [] };
    for (const host of Object.values(hosts)) await timed(['ssh', '-F', config, host, 'true'], env); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const [name, host] of Object.entries(hosts)) trips[name].push(await timed(['ssh', '-F', config, host, 'true'], env));
    }
    for (let round = 0; round < Math.max(3, Math.ceil(rounds / 3)); round++) {
      for (const [name, host] of Object.entries(hosts)) copies[name].push(SCP_BYTES / 1e6 / (await timed(['scp', '-F', config, '-q', file, `${host}:/tmp/bench-payload`], env)));
    }
    const trip = { svc: median(trips.svc), sshd: median(trips.sshd) };
    const rate = { svc: median(copies.svc), sshd: median(copies.sshd) };
    const tripRatio = trip.svc / trip.sshd;
    const rateRatio = rate.svc / rate.sshd;
    const load = os.loadavg().map((value) => value.toFixed(1)).join(' ');
    console.log(`bench/ssh: OpenSSH client to a workspace (svc) and to sshd on loopback, alternating, medians; load average ${load}`);
    console.log(`  ssh HOST true   svc ${trip.svc.toFixed(3)} s   sshd ${trip.sshd.toFixed(3)} s   ${tripRatio.toFixed(2)}×   target ≤ ${ROUND_TRIP_TARGET}×: ${tripRatio <= ROUND_TRIP_TARGET ? 'met' : 'MISSED'}`);
    console.log(`  scp 100 MB      svc ${rate.svc.toFixed(1)} MB/s   sshd ${rate.sshd.toFixed(1)} MB/s   ${rateRatio.toFixed(2)}×   target ≥ ${THROUGHPUT_TARGET}×: ${rateRatio >= THROUGHPUT_TARGET ? 'met' : 'MISSED'}`);
    recordResult('ssh-round-trip', { measured: `svc ${trip.svc.toFixed(3)} s, sshd ${trip.sshd.toFixed(3)} s (${tripRatio.toFixed(2)}×)`, met: tripRatio <= ROUND_TRIP_TARGET });
    recordResult('ssh-scp', { measured: `svc ${rate.svc.toFixed(1)} MB/s, sshd ${rate.sshd.toFixed(1)} MB/s (${rateRatio.toFixed(2)}×)`, met: rateRatio >= THROUGHPUT_TARGET });
  } finally {
    sshd?.stop();
    await rm('/tmp/bench-payload', { force: true }); // the reference's copy (sshd runs as root on this machine)
    if (driver) await removeWorkspaces(driver, [workspace]);
    await server.close();
    await rm(home, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSsh();

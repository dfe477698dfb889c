// bench/cli: wall time of `svc version` and `svc ws list` as the installed command (bin/svc.js, the prebuilt CLI),
// against `node -e ''` (Node's own start) in the same run, alternating, medians; and the same commands run from the
// TypeScript sources through tsx, as svc ran before it was prebuilt. Targets: ≤ 0.15 s and ≤ node -e '' + 0.1 s; each
// targeted row prints its difference and ratio to node -e '' and whether it met them. The machine's load average is
// printed too: under load every row (node -e '' included) takes several times its quiet time.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { svcBin } from '../test/helpers/process.ts';
import { median, startBenchServer } from './http-load.ts';
import { recordResult } from './summary.ts';

const TARGET_S = 0.15;
const TARGET_OVER_NODE_S = 0.1;
const sources = path.resolve(import.meta.dirname, '../src/cli/main.ts');

/** Seconds from spawn to exit; a failing command fails the benchmark. */
function timed(args: string[], env: Record<string, string>): Promise<number> {
  const start = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve((performance.now() - start) / 1000) : reject(new Error(`node ${args.join(' ')} exited with ${code}: ${stderr}`))));
  });
}

export async function benchCli(rounds = Number(process.env.BENCH_CLI_ROUNDS) || 15): Promise<void> {
  const server = await startBenchServer();
  const config = await mkdtemp(path.join(os.tmpdir(), 'svc-bench-cli-'));
  try {
    const env = { SVC_URL: server.url, SVC_TOKEN: server.admin.auth.token!, XDG_CONFIG_HOME: config };
    const commands: Record<string, string[]> = {
      "node -e ''": ['-e', ''],
      'svc version': [svcBin, 'version'],
      'svc ws list': [svcBin, 'ws', 'list'],
      'svc version (sources, tsx)': ['--import', 'tsx', sources, 'version'],
      'svc ws list (sources, tsx)': ['--import', 'tsx', sources, 'ws', 'list'],
    };
    const targeted = ['svc version', 'svc ws list'];
    const loadBefore = os.loadavg().map((value) => value.toFixed(1)).join(' ');
    const times = new Map(Object.keys(commands).map((name) => [name, [] as number[]]));
    for (const args of Object.values(commands)) await timed(args, env); // warm-up (tsx's cache, the disk cache)
    for (let round = 0; round < rounds; round++) {
      for (const [name, args] of Object.entries(commands)) times.get(name)!.push(await timed(args, env));
    }
    const node = median(times.get("node -e ''")!);
    const load = os.loadavg().map((value) => value.toFixed(1)).join(' ');
    console.log(`bench/cli: wall time from spawn to exit, ${rounds} alternating rounds, medians; load average ${loadBefore} before, ${load} after`);
    for (const [name, values] of times) {
      const seconds = median(values);
      const overNode = seconds - node;
      const target = targeted.includes(name) ? `   target ≤ ${TARGET_S} s and ≤ node -e '' + ${TARGET_OVER_NODE_S} s: ${seconds <= TARGET_S && overNode <= TARGET_OVER_NODE_S ? 'met' : 'MISSED'}` : '';
      const relative = name === "node -e ''" ? '' : `node -e '' + ${overNode.toFixed(3)} s (${(seconds / node).toFixed(2)}×)`;
      console.log(`  ${name.padEnd(28)} ${seconds.toFixed(3)} s   ${relative.padEnd(32)}${target}`);
      if (targeted.includes(name)) {
        const met = seconds <= TARGET_S && overNode <= TARGET_OVER_NODE_S;
        recordResult('cli', { measured: `${name} ${seconds.toFixed(3)} s; node -e '' ${node.toFixed(3)} s (+${overNode.toFixed(3)} s, ${(seconds / node).toFixed(2)}×)`, met });
      }
    }
  } finally {
    await rm(config, { recursive: true, force: true });
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCli();

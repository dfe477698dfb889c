// bench/api: requests per second and p99 of GET /api/v1/version and GET /api/v1/me (API key) on the real
// server's API core (--data-plane node: svc's own listener, no proxy in front), against a bare Node http server
// answering the same JSON in the same run, measured with wrk. A third row shows the same through the nginx data
// plane (the default), for information: a proxy hop costs what it costs on either side.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { median, medianOf, startBenchServer, wrk, type Measurement } from './http-load.ts';
import { recordResult, type SummaryRow } from './summary.ts';
import { svcNodeFlags } from '../test/helpers/process.ts';

/** A reference server of bench/ (`bare-server.ts`, `fastify-floor-server.ts`). */
function startReference(file: string): Promise<{ url: string; stop: () => void }> {
  // With svc's Node flags (bin/svc.js), so that they differ from svc only in what runs per request.
  const child = spawn(process.execPath, [...svcNodeFlags, '--import', 'tsx', path.join(import.meta.dirname, file)]);
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match) resolve({ url: match[1], stop: () => child.kill('SIGTERM') });
    });
    child.on('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

/**
 * Short rounds, each measuring svc, bare Node and Fastify alone back to back (in an order that rotates), and the
 * ratios taken within each round: this machine's speed drifts from second to second and minute to minute (the same
 * bare server 11,000 to 63,000 req/s), and a ratio of medians over rounds minutes apart moved by ±0.3 from one run to
 * the next, while the median of ratios measured seconds apart moves by about ±0.05.
 */
async function compare(ours: string, reference: string, floor: string, headers: Record<string, string>, seconds: number, rounds: number) {
  const urls = [ours, reference, floor];
  for (const url of urls) await wrk(url, headers, 1); // warm-up
  const runs: Measurement[][] = urls.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < urls.length; k++) {
      const i = (round + k) % urls.length;
      runs[i].push(await wrk(urls[i], headers, seconds));
    }
  }
  const [oursRuns, referenceRuns, floorRuns] = runs;
  const ratiosOf = (a: Measurement[], b: Measurement[]) => a.map((m, round) => m.rps / b[round].rps);
  const ratios = ratiosOf(oursRuns, referenceRuns);
  return {
    ours: medianOf(oursRuns),
    reference: medianOf(referenceRuns),
    floor: medianOf(floorRuns),
    ratio: median(ratios),
    floorRatio: median(ratiosOf(floorRuns, referenceRuns)),
    oursToFloor: median(ratiosOf(oursRuns, floorRuns)),
    /** The middle half of the rounds' svc/bare ratios: how much the machine moved them. */
    spread: quartiles(ratios),
  };
}

function quartiles(values: number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  return [sorted[Math.floor((sorted.length - 1) / 4)], sorted[Math.ceil(((sorted.length - 1) * 3) / 4)]];
}

export async function benchApi(seconds = Number(process.env.BENCH_SECONDS) || 1, rounds = Number(process.env.BENCH_ROUNDS) || 15): Promise<void> {
  const direct = await startBenchServer(['--data-plane', 'node']);
  const proxied = await startBenchServer().catch(async (error) => {
    await direct.stop();
    throw error;
  });
  const bare = await startReference('bare-server.ts');
  const fastify = await startReference('fastify-floor-server.ts').catch(async (error) => {
    bare.stop();
    await direct.stop();
    await proxied.stop();
    throw error;
  });
  try {
    const key = direct.admin.auth.token!;
    const cases: Array<{ name: string; server: string; path: string; headers: Record<string, string>; row?: SummaryRow; target?: number }> = [
      { name: 'GET /api/v1/version', server: direct.url, path: '/api/v1/version', headers: {}, row: 'api-version', target: 0.85 },
      { name: 'GET /api/v1/me (API key)', server: direct.url, path: '/api/v1/me', headers: { authorization: `Bearer ${key}` }, row: 'api-me', target: 0.6 },
      { name: 'GET /api/v1/version (nginx)', server: proxied.url, path: '/api/v1/version', headers: {} },
    ];
    console.log(`bench/api: wrk -t1 -c32, ${rounds} rounds of ${seconds}s each measuring the three servers back to back; ratios are medians of each round's ratio, req/s and p99 medians of the runs; database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded'}`);
    console.log('  bare: node:http answering the same JSON; fastify: Fastify alone answering it (svc cannot go below it)');
    console.log('case                          svc rps   bare rps  ratio (middle half)   fastify rps  ratio   svc/fastify   svc p99   bare p99');
    for (const c of cases) {
      const { ours, reference, floor, ratio, floorRatio, oursToFloor, spread } = await compare(`${c.server}${c.path}`, `${bare.url}${c.path}`, `${fastify.url}${c.path}`, c.headers, seconds, rounds);
      console.log(
        `${c.name.padEnd(28)} ${ours.rps.toFixed(0).padStart(8)} ${reference.rps.toFixed(0).padStart(10)}  ${ratio.toFixed(2)}x (${spread[0].toFixed(2)}-${spread[1].toFixed(2)})` +
          ` ${floor.rps.toFixed(0).padStart(13)}  ${floorRatio.toFixed(2)}x  ${oursToFloor.toFixed(2).padStart(11)}x` +
          `  ${ours.p99ms.toFixed(2).padStart(6)}ms ${reference.p99ms.toFixed(2).padStart(7)}ms`,
      );
      if (c.row) {
        const measured = `${ratio.toFixed(2)}× (rounds' middle half ${spread[0].toFixed(2)}–${spread[1].toFixed(2)}×; ${ours.rps.toFixed(0)} vs bare ${reference.rps.toFixed(0)} req/s; Fastify alone ${floorRatio.toFixed(2)}× bare)`;
        recordResult(c.row, { measured, met: ratio >= c.target! });
      }
    }
  } finally {
    bare.stop();
    fastify.stop();
    await direct.stop();
    await proxied.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchApi();

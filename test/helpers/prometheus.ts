// The real Prometheus server (Debian's `prometheus`) for tests: our own process on a free loopback port, with a
// temporary configuration and TSDB directory, scraping the given targets every second. Never a system service.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from '../../src/core/loopback.ts';
import { until } from './wait.ts';

export interface PrometheusSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface TestPrometheus {
  url: string;
  /** An instant query through the HTTP API (/api/v1/query): the vector it answers. */
  query(expression: string): Promise<PrometheusSample[]>;
  close(): Promise<void>;
}

/** `target`: `host:port` of a scrape target serving /metrics. */
export async function startPrometheus(target: string): Promise<TestPrometheus> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svc-prometheus-'));
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    '  - job_name: svc',
    '    metrics_path: /metrics',
    '    static_configs:',
    `      - targets: ['${target}']`,
    '',
  ].join('\n');
  await writeFile(path.join(dir, 'prometheus.yml'), config);
  let child: ChildProcess | undefined;
  let output = '';
  let url = '';
  // A port free when asked may be taken before Prometheus binds it: then it exits at once and another is tried.
  for (let attempt = 0; attempt < 5 && !url; attempt++) {
    const port = await freeLoopbackPort();
    const started = spawn('prometheus', [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child = started;
    const ready = await until(async () => {
      if (started.exitCode !== null || started.signalCode !== null) return false;
      const answer = await fetch(`http://127.0.0.1:${port}/-/ready`).catch(() => undefined);
      return answer?.status === 200 ? true : undefined;
    }, 'Prometheus to be ready', 60_000).catch(() => (started.kill('SIGKILL'), false));
    if (ready) url = `http://127.0.0.1:${port}`;
  }
  if (!url) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`prometheus did not start: ${output}`);
  }
  const running = child!;
  return {
    url,
    async query(expression) {
      const answer = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
      const body = (await answer.json()) as { status: string; error?: string; data?: { resultType: string; result: PrometheusSample[] } };
      if (body.status !== 'success') throw new Error(`query ${expression}: ${body.error}`);
      return body.data!.result;
    },
    async close() {
      if (running.exitCode === null && running.signalCode === null) {
        const exited = new Promise((resolve) => running.once('exit', resolve));
        running.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

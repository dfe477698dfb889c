import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ServerMetrics } from './server-metrics.ts';

const dashboard = JSON.parse(readFileSync(new URL('../../deploy/grafana/svc-dashboard.json', import.meta.url), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};

/** The expressions of the dashboard's panels (test/metrics-prometheus.test.ts has Prometheus parse them). */
const dashboardExpressions = (): string[] => dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));

test('the Grafana dashboard reads only metrics the server keeps, and every one of them', () => {
  const kept = new ServerMetrics().registry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name);
  const series = new Set(kept.flatMap((name) => [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]));
  const read = new Set(dashboardExpressions().flatMap((expr) => expr.match(/\bsvc_[a-z_]+/g) ?? []));
  for (const name of read) assert.ok(series.has(name), `${name} is not a metric of svc`);
  for (const name of kept) assert.ok([...read].some((r) => r === name || r.startsWith(`${name}_`)), `${name} is on no panel`);
});

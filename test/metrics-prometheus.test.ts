// Metrics for operators (issue 40 item 3, docs/operators.md "Metrics"): the real Prometheus server scrapes svc's
// --metrics-listen address and answers, through its HTTP API, the wake count and the wakes' latency histogram
// after a wake; /metrics on the API listener is for platform administrators only; no workspace's name or id is in
// the metrics.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { assertProblem, createPerson, type ApiClient } from './helpers/client.ts';
import { startPrometheus, type TestPrometheus } from './helpers/prometheus.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { operationFinished, until } from './helpers/wait.ts';
import { removeWorkspaces } from './helpers/workspaces.ts';

const WORKSPACE_NAME = 'metrics-hidden-name';

let server: TestServer;
let prometheus: TestPrometheus | undefined;
let dev: ApiClient;
let ws: number | undefined;

before(async () => {
  server = await startTestServer({ env: { SVC_METRICS_LISTEN: '127.0.0.1:0' } });
  const owner = await createPerson(server.admin, 'metrics-owner@example.com');
  dev = owner.key;
  const org = (await dev.post('/orgs', { name: 'Metrics' })).body.id;
  const team = (await dev.post('/teams', { org_id: org, name: 'Metrics' })).body.id;
  const created = await dev.post('/workspaces', { team_id: team, name: WORKSPACE_NAME });
  assert.equal(created.status, 202, created.text);
  ws = Number(created.body.target.split('/')[2]);
  assert.equal((await operationFinished(dev, created.body.id)).state, 'succeeded');
});

after(async () => {
  await prometheus?.close();
  if (server) await removeWorkspaces(server.server.driver, [ws]);
  await server?.close();
});

/** Sleeps the workspace by hand (once no operation is on it), then wakes it and waits for the wake's end. */
async function sleepAndWake(): Promise<void> {
  const slept = await until(async () => {
    const answer = await dev.post(`/workspaces/${ws}/sleep`);
    return answer.status === 409 && /busy/.test(answer.body.detail) ? undefined : answer;
  }, 'the workspace to take a sleep');
  assert.equal(slept.status, 200, slept.text);
  const wake = await dev.post(`/workspaces/${ws}/wake`);
  assert.equal(wake.status, 202, wake.text);
  assert.equal((await operationFinished(dev, wake.body.id)).state, 'succeeded');
}

/** The value of the single sample an expression answers, once Prometheus has one at least `atLeast`. */
function sampleOf(expression: string, atLeast: number): Promise<number> {
  return until(async () => {
    const samples = await prometheus!.query(expression);
    const value = samples.length === 1 ? Number(samples[0].value[1]) : NaN;
    return value >= atLeast ? value : undefined;
  }, `Prometheus to answer ${expression} >= ${atLeast}`, 90_000);
}

test('Prometheus scraping --metrics-listen answers the wake count and the wakes\' latency histogram after a wake', async () => {
  const target = new URL(server.server.metricsUrl!);
  assert.equal(target.pathname, '/metrics');
  prometheus = await startPrometheus(target.host);
  await sleepAndWake();
  assert.equal(await sampleOf('sum(svc_workspace_wakes_total{kind="wake"})', 1), 1);
  // the histogram: its count, its buckets up to +Inf, and a quantile computed from them
  assert.equal(await sampleOf('sum(svc_workspace_wake_duration_seconds_count{kind="wake"})', 1), 1);
  const buckets = await prometheus.query('svc_workspace_wake_duration_seconds_bucket{kind="wake"}');
  const infinite = buckets.find((b) => b.metric.le === '+Inf');
  assert.equal(Number(infinite?.value[1]), 1, JSON.stringify(buckets));
  assert.ok(buckets.length > 5, JSON.stringify(buckets));
  const median = await sampleOf('histogram_quantile(0.5, sum by (le) (svc_workspace_wake_duration_seconds_bucket{kind="wake"}))', 0);
  assert.ok(median > 0 && median <= 300, String(median));
  // the wake's phases: the pod gate and the editor's start among them, never a phase named after a service
  const phases = await until(async () => {
    const found = await prometheus!.query('svc_workspace_wake_phase_duration_seconds_count');
    return found.length > 0 ? found.map((s) => s.metric.phase) : undefined;
  }, 'the wake phases');
  assert.ok(phases.includes('queue_and_claim') && phases.includes('pod_gate'), phases.join(', '));
  // the HTTP requests by route pattern and status, with their latency histogram
  const wakes = await sampleOf('sum(svc_http_request_duration_seconds_count{route="/api/v1/workspaces/:ws/wake",method="POST",status="202"})', 1);
  assert.equal(wakes, 1);
  // operations by kind and outcome, the database pool, the workspaces by state
  assert.ok((await sampleOf('sum(svc_operations_total{kind="workspace.wake",outcome="succeeded"})', 1)) >= 1);
  assert.ok((await sampleOf('sum(svc_database_pool_connections{state="total"})', 1)) >= 1);
  assert.equal(await sampleOf('sum(svc_workspaces{state="running"})', 1), 1);
  assert.equal(await sampleOf('sum(svc_services)', 0), 0); // the workspace has no landscape
  assert.equal(await sampleOf('max(svc_image_store_bytes{kind="limit"})', 1), 20 * 1024 ** 3);
});

test("every panel of deploy/grafana/svc-dashboard.json is a query Prometheus answers", async () => {
  const dashboard = JSON.parse(await readFile(new URL('../deploy/grafana/svc-dashboard.json', import.meta.url), 'utf8'));
  // Grafana's macros as Grafana fills them in
  const expressions: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((t) => t.expr));
  assert.ok(expressions.length >= 14);
  for (const expression of expressions) await prometheus!.query(expression.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h'));
  // the state panels read what the scrape holds now
  assert.deepEqual((await prometheus!.query('max by (state) (svc_workspaces) > 0')).map((s) => [s.metric.state, s.value[1]]), [['running', '1']]);
});

test('/metrics on the API listener: 401 without credentials, 403 for a key without platform.admin, the text for an administrator', async () => {
  const url = `${server.url}/metrics`;
  const anonymous = await fetch(url);
  assert.equal(anonymous.status, 401);
  assert.equal((await anonymous.json()).type, 'urn:svc:problem:unauthenticated');
  const member = await fetch(url, { headers: { authorization: `Bearer ${dev.auth.token}` } });
  assert.equal(member.status, 403);
  assert.equal(member.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  assert.equal((await member.json()).type, 'urn:svc:problem:forbidden');
  const admin = await fetch(url, { headers: { authorization: `Bearer ${server.admin.auth.token}` } });
  assert.equal(admin.status, 200);
  assert.match(admin.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = await admin.text();
  assert.match(text, /^# TYPE svc_workspace_wakes_total counter$/m);
  assert.match(text, /^svc_http_request_duration_seconds_bucket\{le="0\.001",method="GET",route="\/api\/v1\/operations\/:id",status="200"\} \d+$/m);
});

test('no workspace name, id or raw address is in the metrics; labels are route patterns', async () => {
  const text = await (await fetch(server.server.metricsUrl!)).text();
  assert.ok(text.length > 1000, text);
  assert.doesNotMatch(text, new RegExp(WORKSPACE_NAME));
  assert.doesNotMatch(text, new RegExp(`/workspaces/${ws}\\b`));
  assert.doesNotMatch(text, /workspace_id|workspace="/);
  assert.doesNotMatch(text, /svc_[a-z_]+\{[^}]*route="\/api\/v1\/[^"]*\/\d+/); // a raw address would carry an id
  assertProblem(await dev.get(`/workspaces/${ws}/nope`), 404, 'not-found');
  assert.match(await (await fetch(server.server.metricsUrl!)).text(), /route="unmatched",status="404"/);
});

test('the --metrics-listen address serves only GET /metrics: other paths 404, other methods 405, as problems', async () => {
  const other = await fetch(new URL('/api/v1/version', server.server.metricsUrl!));
  assert.equal(other.status, 404);
  assert.equal(other.headers.get('content-type'), 'application/problem+json');
  assert.equal((await other.json()).type, 'urn:svc:problem:not-found');
  const post = await fetch(server.server.metricsUrl!, { method: 'POST' });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
  assert.equal((await post.json()).type, 'urn:svc:problem:method-not-allowed');
});

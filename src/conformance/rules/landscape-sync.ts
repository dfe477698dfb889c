// A landscape Sync and Teardown (spec 1, 2.4, 4.10, 7) on the workspace cloned from --repo. The spec names no path
// for plan, Sync and Teardown: the rules use them where the installation's OpenAPI document lists them
// (GET /workspaces/{ws}/landscape/plan, POST .../landscape/sync with the plan's hash, POST .../landscape/teardown)
// and are skipped otherwise.
import { expectAccepted, expectProblem } from '../shapes.ts';
import { check, described, skip, type Rule, type SuiteContext } from '../suite.ts';

async function landscapeWorkspace(context: SuiteContext): Promise<number> {
  const { id } = context.needWorkspace();
  if (!context.options.repo) skip('no repository with a svc.yml to sync (give --repo URL)');
  return id;
}

async function needDocumented(context: SuiteContext, method: string, path: string): Promise<void> {
  if (!(await context.documents(method, path))) skip(`the installation's OpenAPI document has no ${method} ${path} (the spec names no path for it)`);
}

/** Names of the services a plan or landscape lists, as a map or as a list of `{ name }`. */
function serviceNames(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((s) => (s as { name?: unknown }).name).filter((n): n is string => typeof n === 'string');
  return value && typeof value === 'object' ? Object.keys(value) : [];
}

export const landscapeRules: Rule[] = [
  {
    section: '4.10',
    title: 'GET /workspaces/{ws}/landscape answers the landscape before any Sync',
    async run(context) {
      const id = await landscapeWorkspace(context);
      const answer = await context.http.get(`/workspaces/${id}/landscape`);
      check(answer.status === 200, `${described(answer)}, not 200`);
    },
  },
  {
    section: '7',
    title: 'a Sync of a plan that is out of date answers 409 urn:svc:problem:plan-changed',
    async run(context) {
      const id = await landscapeWorkspace(context);
      await needDocumented(context, 'POST', '/workspaces/{ws}/landscape/sync');
      const answer = await context.http.post(`/workspaces/${id}/landscape/sync`, { plan_hash: '0'.repeat(64) }, { idempotent: true });
      expectProblem(answer, 409, 'plan-changed');
    },
  },
  {
    section: '1',
    title: 'Sync applies the file (a landscape.sync operation that succeeds) and the landscape then lists its services',
    async run(context) {
      const id = await landscapeWorkspace(context);
      await needDocumented(context, 'GET', '/workspaces/{ws}/landscape/plan');
      await needDocumented(context, 'POST', '/workspaces/{ws}/landscape/sync');
      const plan = await context.http.get(`/workspaces/${id}/landscape/plan`);
      check(plan.status === 200 && typeof plan.body?.hash === 'string', `${described(plan)} without a plan hash`);
      const started = await context.http.post(`/workspaces/${id}/landscape/sync`, { plan_hash: plan.body.hash }, { idempotent: true });
      const operation = expectAccepted(started, 'landscape.sync');
      const ended = await context.operationEnded(operation.id);
      check(ended.state === 'succeeded', `the landscape.sync operation ${ended.state}: ${ended.error?.detail ?? ended.error?.title ?? ''}`);
      const landscape = await context.http.get(`/workspaces/${id}/landscape`);
      check(landscape.status === 200, `${described(landscape)}, not 200`);
      const listed = serviceNames(landscape.body?.services);
      const missing = serviceNames(plan.body.services).filter((name) => !listed.includes(name));
      check(missing.length === 0, `the landscape does not list ${missing.join(', ')} after the Sync`);
    },
  },
];

export const teardownRules: Rule[] = [
  {
    section: '1',
    title: 'Teardown of the synced landscape is a landscape.teardown operation that succeeds',
    async run(context) {
      const id = await landscapeWorkspace(context);
      await needDocumented(context, 'POST', '/workspaces/{ws}/landscape/teardown');
      const started = await context.http.post(`/workspaces/${id}/landscape/teardown`, undefined, { idempotent: true });
      const operation = expectAccepted(started, 'landscape.teardown');
      const ended = await context.operationEnded(operation.id);
      check(ended.state === 'succeeded', `the landscape.teardown operation ${ended.state}: ${ended.error?.detail ?? ''}`);
    },
  },
];

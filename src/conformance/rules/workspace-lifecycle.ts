// A workspace's life as the spec describes it (2.3, 2.4, 3.1, 4.1, 4.9, 4.10): create with an Idempotency-Key (202,
// Location, the operation, replay and misuse of the key), follow the operation, read it with its ETag, change it
// under If-Match (428, 412, 200), put it to sleep and soft-delete it. The context removes it at the end.
import { randomBytes, randomUUID } from 'node:crypto';
import { expectAccepted, expectProblem, isDateTime, isId } from '../shapes.ts';
import { check, described, fail, skip, type Rule, type SuiteContext } from '../suite.ts';

/** The team to create in: --team, else the first the key can see. */
async function teamFor(context: SuiteContext): Promise<number> {
  if (context.options.team) return context.options.team;
  const teams = await context.http.get('/teams');
  check(teams.status === 200, `${described(teams)}, not 200`);
  const items = Array.isArray(teams.body) ? teams.body : teams.body?.items;
  const first = Array.isArray(items) ? items.find((team: { id?: unknown }) => isId(team.id)) : undefined;
  return first?.id ?? skip('the key sees no team to create a workspace in (give --team)');
}

/** Soft-deletes (when not yet) and purges the workspace where the installation documents a purge. */
async function removeWorkspace(context: SuiteContext, id: number): Promise<void> {
  const { http } = context;
  const current = await http.get(`/workspaces/${id}`);
  if (current.status === 404) return;
  if (!current.body?.deleted_at) {
    const deleted = await http.delete(`/workspaces/${id}`, { headers: { 'if-match': current.headers.get('etag') ?? '*' } });
    if (deleted.status !== 202) throw new Error(`${described(deleted)}`);
    await context.operationEnded(deleted.body.id);
  }
  if (!(await context.documents('POST', '/workspaces/{ws}/purge'))) throw new Error('left soft-deleted (the installation documents no purge); it is purged after 7 days');
  const purged = await http.post(`/workspaces/${id}/purge`, undefined, { idempotent: true });
  if (purged.status === 202) await context.operationEnded(purged.body.id);
  else if (purged.status >= 300) throw new Error(described(purged));
}

export const lifecycleRules: Rule[] = [
  {
    section: '4.9',
    title: 'creating a workspace answers 202 with the workspace.create operation and its address in Location',
    async run(context) {
      context.workspaceMissing = 'creating it failed';
      const team = await teamFor(context);
      const name = `conformance-${randomBytes(3).toString('hex')}`;
      const createBody = { team_id: team, name, ...(context.options.repo ? { git: { provider: 'git', repo: context.options.repo } } : {}) };
      const idempotencyKey = randomUUID();
      const answer = await context.http.post('/workspaces', createBody, { headers: { 'idempotency-key': idempotencyKey } });
      if (answer.status === 202 && typeof answer.body?.id === 'string') context.creation = { idempotencyKey, body: createBody, operationId: answer.body.id };
      const operation = expectAccepted(answer, 'workspace.create');
      const ended = await context.operationEnded(operation.id);
      check(ended.state === 'succeeded', `the workspace.create operation ${ended.state}: ${ended.error?.detail ?? ended.error?.title ?? ''}`);
      const match = /^\/workspaces\/(\d+)$/.exec(ended.target ?? '');
      check(match, `the finished operation's target is ${JSON.stringify(ended.target)}, not /workspaces/<id>`);
      const id = Number(match[1]);
      context.workspace = { id, teamId: team, name, createOperation: operation.id };
      context.onCleanup(`workspace ${id}`, () => removeWorkspace(context, id));
    },
  },
  {
    section: '4.1',
    title: 'repeating a create with the same Idempotency-Key and body replays its answer with Idempotent-Replayed: true',
    async run(context) {
      const { idempotencyKey, body, operationId } = context.creation ?? skip('the first create did not answer 202');
      const again = await context.http.post('/workspaces', body, { headers: { 'idempotency-key': idempotencyKey } });
      check(again.status === 202, `${described(again)}, not the first answer's 202`);
      check(again.body?.id === operationId, 'the replayed answer names another operation');
      check(again.headers.get('idempotent-replayed') === 'true', 'the replayed answer has no Idempotent-Replayed: true');
    },
  },
  {
    section: '4.1',
    title: 'the same Idempotency-Key with another body answers 422',
    async run(context) {
      const { idempotencyKey, body } = context.creation ?? skip('the first create did not answer 202');
      const other = { ...body, name: `${body.name}-other` };
      expectProblem(await context.http.post('/workspaces', other, { headers: { 'idempotency-key': idempotencyKey } }), 422);
    },
  },
  {
    section: '4.10',
    title: 'GET /workspaces/{ws} returns the workspace with an ETag',
    async run(context) {
      const { id, teamId, name } = context.needWorkspace();
      const answer = await context.http.get(`/workspaces/${id}`);
      check(answer.status === 200, `${described(answer)}, not 200`);
      check(answer.headers.get('etag'), 'the answer has no ETag');
      const ws = answer.body;
      check(ws?.id === id && ws.team_id === teamId && ws.name === name, 'id, team_id or name differ from what was created');
      check(typeof ws.state === 'string' && typeof ws.status_detail === 'string', 'state or status_detail is not a string');
      check(isDateTime(ws.created_at), 'created_at is not a date-time');
    },
  },
  {
    section: '4.1',
    title: 'a change without If-Match answers 428, with a stale one 412, with the current one succeeds and the ETag changes',
    async run(context) {
      const { id, name } = context.needWorkspace();
      const { http } = context;
      expectProblem(await http.patch(`/workspaces/${id}`, { name: `${name}-b` }), 428);
      expectProblem(await http.patch(`/workspaces/${id}`, { name: `${name}-b` }, { headers: { 'if-match': '"conformance-stale"' } }), 412);
      const etag = (await http.get(`/workspaces/${id}`)).headers.get('etag') ?? fail('the workspace has no ETag');
      const renamed = await http.patch(`/workspaces/${id}`, { name: `${name}-b` }, { headers: { 'if-match': etag } });
      check(renamed.status === 200, `${described(renamed)} with the current ETag, not 200`);
      const after = await http.get(`/workspaces/${id}`);
      check(after.body?.name === `${name}-b`, `the name is ${JSON.stringify(after.body?.name)} after the change`);
      check(after.headers.get('etag') !== etag, 'the ETag did not change with the workspace');
      context.workspace!.name = `${name}-b`;
    },
  },
];

export const endOfLifeRules: Rule[] = [
  {
    section: '3.1',
    title: 'POST /workspaces/{ws}/sleep puts a running workspace to sleep (its state changes)',
    async run(context) {
      const { id } = context.needWorkspace();
      const before = await context.http.get(`/workspaces/${id}`);
      const answer = await context.http.post(`/workspaces/${id}/sleep`);
      check(answer.status >= 200 && answer.status < 300, `${described(answer)}, not a success`);
      if (answer.status === 202) await context.operationEnded(answer.body.id);
      const after = await context.http.get(`/workspaces/${id}`);
      check(after.body?.state !== before.body?.state, `the state stayed ${JSON.stringify(after.body?.state)}`);
    },
  },
  {
    section: '3.1',
    title: 'a soft delete (If-Match) is an operation; the workspace then shows deleted_at and purge_after 7 days later',
    async run(context) {
      const { id } = context.needWorkspace();
      const current = await context.http.get(`/workspaces/${id}`);
      const deleted = await context.http.delete(`/workspaces/${id}`, { headers: { 'if-match': current.headers.get('etag') ?? '*' } });
      const operation = expectAccepted(deleted, 'workspace.delete');
      const ended = await context.operationEnded(operation.id);
      check(ended.state === 'succeeded', `the workspace.delete operation ${ended.state}`);
      const after = await context.http.get(`/workspaces/${id}`);
      check(after.status === 200, `${described(after)} for a soft-deleted workspace, not 200`);
      check(isDateTime(after.body?.deleted_at) && isDateTime(after.body?.purge_after), 'deleted_at or purge_after is missing');
      const days = (Date.parse(after.body.purge_after) - Date.parse(after.body.deleted_at)) / 86_400_000;
      check(Math.abs(days - 7) < 0.01, `purge_after is ${days.toFixed(3)} days after deleted_at, not 7`);
    },
  },
];

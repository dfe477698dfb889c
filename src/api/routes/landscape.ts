// The landscape of a workspace (3.7): its state and banner, the plan of the next Sync, Sync and Teardown.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { problem } from '../../core/problems.ts';
import { enqueueOperation } from '../../operations/queue.ts';
import { withTransaction } from '../../store/database.ts';
import { findDeployedLandscape } from '../../store/landscapes.ts';
import { activeOperationOn } from '../../store/operations.ts';
import { checkProfile, currentVariablesHash, deployedOf, missingSecretsOf, planFor, readCurrentLandscape, refuseMissingSecrets, refuseUnrunnableManaged } from '../../workspaces/landscape-service.ts';
import { devUrlState } from '../../workspaces/deployment.ts';
import { prefetchImages, refuseContainersWithoutImages } from '../../workspaces/container-images.ts';
import { landscapeBanner } from '../../workspaces/landscape-state.ts';
import { workspaceAddresses } from '../../workspaces/view.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, FieldErrorSchema, Id } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { serviceAddresses } from '../../workspaces/service-addresses.ts';
import { ServiceViewSchema } from './services.ts';
import { acceptOperation, workspaceAccess, workspaceUrls } from './workspaces.ts';

const params = Type.Object({ ws: Id });
const ProfileQuery = Type.Object({ profile: Type.Optional(Type.String({ maxLength: 64, description: 'profile name; svc.yml when absent' })) });
const tags = ['landscape'];

const LandscapeSchema = Type.Object({
  workspace_id: Id,
  profile: Type.Union([Type.String(), Type.Null()], { description: 'profile of the deployed landscape; null for svc.yml' }),
  banner: Type.Object({ state: Type.String(), detail: Type.Optional(Type.String()), errors: Type.Optional(Type.Array(FieldErrorSchema)) }),
  synced_at: Type.Optional(DateTime),
  synced_by: Type.Optional(Id),
  services: Type.Array(ServiceViewSchema),
  dev_url: Type.Object({
    url: Type.String(),
    state: Type.String({ description: 'served, asleep, waking-up, starting, stopped, failed, not-served (3.7)' }),
    detail: Type.String(),
  }),
});

const ServiceChangeSchema = Type.Object({
  name: Type.String(),
  action: Type.Union([Type.Literal('create'), Type.Literal('change'), Type.Literal('replace'), Type.Literal('remove')]),
  type: Type.String({ description: 'type in the new file; for remove, the type it had' }),
  previousType: Type.Optional(Type.String({ description: 'the type it had, for replace' })),
  changes: Type.Array(Type.String(), { description: 'JSON Pointers into the normal form of what changes' }),
  environment: Type.Array(Type.String(), { description: 'names (never values) of the environment variables whose value changes at Sync; for a managed service, of its secrets whose value changed (a new password)' }),
  restarts: Type.Boolean({ description: "whether Sync starts the service afresh; for a managed service, whether Sync restarts its server (a value whose update rule is restart changes)" }),
  reason: Type.Optional(Type.String({ description: 'why a changed service restarts: a managed service\'s values that need it (e.g. "connections 100 -> 150"), or a container image whose tag names another digest now' })),
});

const PlanImageSchema = Type.Object({
  service: Type.String(),
  image: Type.String({ description: 'the reference as the file writes it' }),
  digest: Type.Union([Type.String(), Type.Null()], { description: 'sha256 the reference names now: what Sync runs; null when it cannot be resolved (problem)' }),
  deployed_digest: Type.Optional(Type.String({ description: 'the digest the deployed landscape runs for the service' })),
  problem: Type.Optional(Type.Object({ type: Type.Optional(Type.String()), title: Type.Optional(Type.String()), status: Type.Optional(Type.Integer()), detail: Type.Optional(Type.String()) }, { additionalProperties: true, description: 'why the digest is unknown: the problem (image-unavailable) a Sync would fail with' })),
});

const StageChangeSchema = Type.Object({ changed: Type.Boolean(), changes: Type.Array(Type.String()) });

const PlanSchema = Type.Object({
  profile: Type.Union([Type.String(), Type.Null()]),
  hash: Type.String({ description: 'send it to Sync; a different file answers 409 plan-changed' }),
  changed: Type.Boolean(),
  services: Type.Array(ServiceChangeSchema),
  unchanged: Type.Array(Type.String()),
  prepare: StageChangeSchema,
  test: StageChangeSchema,
  images: Type.Array(PlanImageSchema, { description: 'each container service: image -> digest (Sync runs exactly that digest until the next Sync); resolved at Plan, cached 30 s' }),
  missing_secrets: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        uses: Type.Array(Type.Object({ pointer: Type.String(), line: Type.Optional(Type.Integer()), column: Type.Optional(Type.Integer()) }), { description: 'where the file uses it' }),
      }),
      { description: 'secrets the file uses that have no value in the vault: the plan fills them in empty, and Sync is refused (409 missing-secrets) until each has one' },
    ),
  ),
});

const SyncBody = Type.Object(
  { profile: Type.Optional(Type.String({ maxLength: 64 })), plan_hash: Type.String({ pattern: '^[0-9a-f]{64}$', patternErrorMessage: 'must be the hash of a plan: 64 lowercase hexadecimal digits' }) },
  { additionalProperties: false },
);

export function registerLandscapeRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/workspaces/:ws/landscape', { config: { access: 'user' }, schema: { summary: 'The landscape: banner state (3.7) and services', tags, params, querystring: ProfileQuery, response: { 200: LandscapeSchema } } }, async (request) => {
    const { row, access } = await workspaceAccess(deps, request);
    requirePermission(access.permissions, 'landscape.view');
    const profile = checkProfile(request.query.profile);
    const [current, deployedRow, hash, busy] = await Promise.all([
      readCurrentLandscape(deps, row, profile, { user: request.principal!.user.id }),
      findDeployedLandscape(deps.pool, row.id),
      currentVariablesHash(deps.pool, row.id),
      withTransaction(deps.pool, (db) => activeOperationOn(db, `/workspaces/${row.id}`)),
    ]);
    const deployed = deployedOf(deployedRow);
    const views = await deps.services.views(row, deployedRow);
    const addresses = serviceAddresses(deployedRow?.normal, row.id, workspaceUrls(deps));
    const services = views.map((view) => ({ ...view, ports: addresses.get(view.name) ?? [] }));
    const applying = busy !== undefined && busy.kind.startsWith('landscape.');
    return {
      workspace_id: row.id,
      profile: deployed?.profile ?? null,
      banner: landscapeBanner({ applying, deployed, selectedProfile: profile, current, variablesHash: hash }),
      synced_at: deployedRow?.synced_at.toISOString(),
      synced_by: deployedRow?.synced_by ?? undefined,
      services,
      dev_url: { url: workspaceAddresses(row.id, workspaceUrls(deps)).dev, ...devUrlState(deployedRow?.normal, deployedRow?.torn_down ?? false, row.state, services) },
    };
  });

  app.get('/workspaces/:ws/landscape/plan', { config: { access: 'user' }, schema: { summary: 'What a Sync would do: per service create, change or remove, and the plan hash', tags, params, querystring: ProfileQuery, response: { 200: PlanSchema } } }, async (request) => {
    const { row, access } = await workspaceAccess(deps, request);
    requirePermission(access.permissions, 'landscape.view');
    const profile = checkProfile(request.query.profile);
    const { plan, normal, images, missingSecrets } = await planFor(deps.pool, deps, row, profile, { secrets: deps.secrets, urls: workspaceUrls(deps), images: deps.images }, { user: request.principal!.user.id });
    // a caller who may Sync will likely Sync this plan: its new images start downloading now (decisions.md)
    if (access.permissions.includes('landscape.sync')) prefetchImages(deps.images, row, normal, images);
    return { profile, images: [], ...plan, ...(missingSecrets && { missing_secrets: missingSecretsOf(missingSecrets) }) };
  });

  app.post('/workspaces/:ws/landscape/sync', { config: { access: 'user', audit: 'landscape.sync' }, schema: { summary: 'Apply the reviewed plan (an operation); 409 missing-secrets while secrets the file uses have no value; 409 plan-changed when the file changed since; 403 run-as-user-not-allowed; 501 not-available while managed or container services cannot run here', tags, params, body: SyncBody, response: { 202: OperationSchema } } }, async (request, reply) => {
    const { row, access } = await workspaceAccess(deps, request);
    requirePermission(access.permissions, 'landscape.sync');
    const body = request.body;
    const profile = checkProfile(body.profile);
    const planned = await planFor(deps.pool, deps, row, profile, { secrets: deps.secrets, urls: workspaceUrls(deps), images: deps.images }, { user: request.principal!.user.id });
    refuseMissingSecrets(planned);
    const { plan, normal } = planned;
    if (plan.hash !== body.plan_hash) {
      throw problem('plan-changed', 409, 'The file or the deployed landscape changed since this plan was made; plan again.', { extra: { plan_hash: plan.hash } });
    }
    refuseUnrunnableManaged(normal, deps.driver);
    refuseContainersWithoutImages(normal, deps.images);
    return acceptOperation(reply, await enqueueLandscapeOperation(deps, row.id, row.team_id, request.principal!.user.id, 'landscape.sync', { profile, plan_hash: body.plan_hash }));
  });

  app.post('/workspaces/:ws/landscape/teardown', { config: { access: 'user', audit: 'landscape.teardown' }, schema: { summary: 'Stop every service of the landscape; code, variables and secrets stay (an operation)', tags, params, response: { 202: OperationSchema } } }, async (request, reply) => {
    const { row, access } = await workspaceAccess(deps, request);
    requirePermission(access.permissions, 'landscape.sync');
    const deployed = await findDeployedLandscape(deps.pool, row.id);
    if (!deployed || deployed.torn_down) throw problem('conflict', 409, 'No landscape runs: there is nothing to tear down.');
    return acceptOperation(reply, await enqueueLandscapeOperation(deps, row.id, row.team_id, request.principal!.user.id, 'landscape.teardown', {}));
  });
}

async function enqueueLandscapeOperation(deps: ApiDeps, workspaceId: number, teamId: number, userId: number, kind: string, input: Record<string, unknown>) {
  const target = `/workspaces/${workspaceId}`;
  return withTransaction(deps.pool, async (db) => {
    const busy = await activeOperationOn(db, target);
    if (busy) throw problem('conflict', 409, `The workspace is busy (${busy.kind}); try again when it has finished.`);
    return enqueueOperation(db, { kind, target, teamId, createdBy: userId, input: { workspace_id: workspaceId, ...input }, at: deps.clock.now() });
  });
}

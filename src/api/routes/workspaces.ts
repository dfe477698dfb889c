// Workspaces (2.3, 4.9, 4.10): create (an operation), list, read with ETag, change with If-Match.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { stat } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { requirePermission, teamAccess, teamAccesses, type TeamAccess } from '../../auth/access.ts';
import type { CallerUser } from '../../auth/credentials.ts';
import { teamPermissions, type OrgRole, type TeamRole } from '../../auth/permissions.ts';
import { chosenWorkspacePlan } from '../../capacity/plan-choice.ts';
import { refuseOverCapacity } from '../../capacity/team-capacity.ts';
import { notFound, problem } from '../../core/problems.ts';
import { enqueueOperation } from '../../operations/queue.ts';
import { operationView } from '../../operations/view.ts';
import { publishEvent } from '../../events/publish.ts';
import { isUniqueViolation, withTransaction } from '../../store/database.ts';
import { findWorkspace, insertWorkspace, teamStorage, updateWorkspace, type WorkspaceListRow, type WorkspaceRow } from '../../store/workspaces.ts';
import { addressJson } from '../../workspaces/view-json.ts';
import { readListPage, WorkspaceItems } from '../../workspaces/list-page.ts';
import { readDevService } from '../../workspaces/dev-service.ts';
import { workspaceActivity } from '../../workspaces/activity-facts.ts';
import { refuseBaseImageWithoutImages } from '../../workspaces/base-image.ts';
import { initialStatus } from '../../workspaces/lifecycle.ts';
import { workspaceRef } from '../../workspaces/operations.ts';
import { workspaceUrlsFromBase, workspaceView, type WorkspaceUrls } from '../../workspaces/view.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import type { WithDefaults } from '../conventions/validation.ts';
import { preconditionFailed, requireIfMatch, setEtag } from '../conventions/etag.ts';
import { Page, PageQuery, pageLimit } from '../conventions/pagination.ts';
import { Id, IfMatchHeaders } from '../schemas.ts';
import { OperationSchema } from './operations.ts';
import { GitCorrectionSchema, NewWorkspaceSchema, WorkspaceParams, WorkspacePatchSchema, WorkspaceSchema } from './workspace-schemas.ts';
import { gitRemoteOf, hasSecretInUrl } from '../../git/hosts.ts';

/** Read once per configuration (a list page asked for them once a row). */
const urlsByConfig = new WeakMap<ApiDeps['config'], WorkspaceUrls>();
export function workspaceUrls(deps: ApiDeps): WorkspaceUrls {
  let urls = urlsByConfig.get(deps.config);
  if (!urls) urlsByConfig.set(deps.config, (urls = workspaceUrlsFromBase(deps.config.baseUrl, deps.config.workspaceDomain)));
  return urls;
}

const workspacePermission = /^(workspace|landscape|variables)\./;

/** The workspace and the caller's permissions on it; 404 when it is gone or invisible. */
export async function workspaceAccess(deps: ApiDeps, request: RequestWithParams<{ ws: number }>): Promise<{ row: WorkspaceRow; access: TeamAccess }> {
  const row = await findWorkspace(deps.pool, request.params.ws);
  if (!row) throw notFound('workspace');
  const access = await teamAccess(deps.pool, request.principal!.user, row.team_id).catch(() => {
    throw notFound('workspace');
  });
  if (!access.permissions.includes('workspace.view')) throw notFound('workspace');
  request.auditTeamId = row.team_id;
  return { row, access };
}

const PAGE_OPEN = Buffer.from('{"items":[');

/** The list's items by row version (and the JSON text of their addresses), once per configuration. */
const keptItemsByConfig = new WeakMap<ApiDeps['config'], WorkspaceItems>();
function keptItemsOf(deps: ApiDeps): WorkspaceItems {
  let kept = keptItemsByConfig.get(deps.config);
  if (!kept) keptItemsByConfig.set(deps.config, (kept = new WorkspaceItems(addressJson(workspaceUrls(deps)))));
  return kept;
}

/** The JSON array (UTF-8) of workspace permissions a standing grants, by standing; undefined: the team is not visible. */
const permissionsByStanding = new Map<string, Buffer | undefined>();
function workspacePermissionsBytes(isAdmin: boolean, teamRole: string | null, orgRole: string | null): Buffer | undefined {
  const key = `${isAdmin} ${teamRole} ${orgRole}`;
  if (permissionsByStanding.has(key)) return permissionsByStanding.get(key);
  const all = teamPermissions({ isAdmin, teamRole: (teamRole ?? undefined) as TeamRole | undefined, orgRole: (orgRole ?? undefined) as OrgRole | undefined });
  const bytes = all.length === 0 ? undefined : Buffer.from(JSON.stringify(all.filter((p) => workspacePermission.test(p))));
  permissionsByStanding.set(key, bytes);
  return bytes;
}

/**
 * A cursor's position; 422 for one this list did not issue. Of a team the caller may not see, 404 comes first (as
 * it did when the standing was read before the cursor): the error path reads the standing.
 */
async function cursorPosition(deps: ApiDeps, user: CallerUser, scope: string, cursor: string, team: number | undefined): Promise<number> {
  try {
    return deps.cursors.decode<number>(scope, cursor);
  } catch (error) {
    if (team !== undefined && !(await teamAccesses(deps.pool, user, [team])).has(team)) throw notFound('team');
    throw error;
  }
}

/** A team's workspace permissions, filtered once per access read (a list page shares it among its rows). */
const workspacePermissionsOf = new WeakMap<TeamAccess, string[]>();

export function viewFor(deps: ApiDeps, row: WorkspaceListRow, access: TeamAccess) {
  let permissions = workspacePermissionsOf.get(access);
  if (!permissions) workspacePermissionsOf.set(access, (permissions = access.permissions.filter((p) => workspacePermission.test(p))));
  return workspaceView(row, workspaceUrls(deps), permissions);
}

/** The user who started the server (through sudo: the one who ran sudo), whose paths `own` allows. */
const startingUid = () => Number(process.env.SUDO_UID ?? process.getuid?.() ?? 0);

/**
 * Local paths and file:// URLs would let anyone read the server's files; they need an explicit setting, named in
 * the refusal: `true` allows any, `own` those owned by the user who started the server.
 */
async function checkRepository(repo: string, allowLocal: boolean | 'own'): Promise<void> {
  const remote = /^(https?|ssh|git):\/\/[^/\s]+\/\S+$/.test(repo) || /^[\w.-]+@[\w.-]+:\S+$/.test(repo);
  const local = /^file:\/\/\/\S+$/.test(repo) || repo.startsWith('/');
  if (remote && hasSecretInUrl(repo)) {
    const host = gitRemoteOf(repo).host;
    throw problem('repository-not-allowed', 422, `The address carries a password or token, which svc never stores: give it without, and store the credential with \`svc git-credentials add ${host}\`.`, {
      errors: [{ pointer: '/git/repo', message: 'must not carry a password or token' }],
    });
  }
  if (remote || (local && allowLocal === true)) return;
  const refuse = (detail: string, message: string) => problem('repository-not-allowed', 422, detail, { errors: [{ pointer: '/git/repo', message }] });
  if (!local) throw refuse(`"${repo}" is not a git URL.`, 'is not a git URL');
  if (allowLocal === false) {
    throw refuse(
      'Cloning local paths is turned off on this installation; its operator allows it with --allow-local-repositories true (SVC_ALLOW_LOCAL_REPOSITORIES), or own for the paths of the user who started the server.',
      'local repositories are not allowed here (--allow-local-repositories)',
    );
  }
  const file = repo.startsWith('file://') ? decodeURIComponent(repo.slice('file://'.length)) : repo;
  const owner = await stat(file).then((s) => s.uid, () => undefined);
  if (owner === undefined) throw refuse(`"${file}" does not exist on the server.`, 'does not exist on the server');
  if (owner !== startingUid()) {
    throw refuse(
      `Only local repositories of the user who started the server (uid ${startingUid()}) are cloned here; "${file}" belongs to uid ${owner}. Its operator allows any with --allow-local-repositories true.`,
      'belongs to another user than the one who started the server (--allow-local-repositories own)',
    );
  }
}

/**
 * The columns of a corrected repository address or ref. Only a workspace whose clone failed takes one: a cloned
 * volume holds its repository (change it there with git), and one being cloned is busy.
 */
async function correctedRepository(deps: ApiDeps, row: WorkspaceRow, git: Static<typeof GitCorrectionSchema>): Promise<Partial<WorkspaceRow>> {
  if (!row.git_repo) throw problem('conflict', 409, 'The workspace was made empty, without a repository; create another workspace to clone one.');
  if (row.source_ready || (row.state !== 'error' && row.state !== 'stopped')) {
    throw problem('conflict', 409, row.source_ready ? 'The repository is cloned already; change its remote with git inside the workspace.' : 'The workspace is being cloned; wait until it has finished or failed.');
  }
  if (git.repo !== undefined) await checkRepository(git.repo, deps.config.allowLocalRepositories);
  return {
    ...(git.repo !== undefined ? { git_repo: git.repo } : {}),
    ...(git.ref !== undefined ? { git_ref: git.ref } : {}),
    ...(git.provider !== undefined ? { git_provider: git.provider } : {}),
  };
}

async function checkQuota(deps: ApiDeps, teamId: number, wanted: number): Promise<void> {
  const storage = await teamStorage(deps.pool, teamId);
  const left = storage.quotaGib - storage.usedGib;
  if (wanted <= left) return;
  const held = storage.deletedWorkspaces > 0 ? ` ${storage.deletedGib} GiB of it is held by ${storage.deletedWorkspaces} deleted workspace(s); purge them to free it.` : '';
  throw problem('quota-exceeded', 409, `The workspace needs ${wanted} GiB of storage; the team has ${Math.max(0, left)} GiB left of ${storage.quotaGib} GiB.${held}`, {
    extra: { held_by_deleted: { workspaces: storage.deletedWorkspaces, storage_gib: storage.deletedGib } },
  });
}

export function acceptOperation(reply: FastifyReply, operation: Parameters<typeof operationView>[0]) {
  reply.code(202).header('location', `/api/v1/operations/${operation.id}`);
  return operationView(operation);
}

/** How long a read of a workspace waits for its volume's use (a Kubernetes driver measures it with a Job). */
const DISK_USAGE_WAIT_MS = 2_000;

/**
 * The volume's use against its size (spec 7 "workspace over its disk quota"); undefined while it has no volume, or
 * while it is being measured beyond DISK_USAGE_WAIT_MS (a read never waits on a pod the scheduler cannot place).
 */
async function diskUsageOf(deps: ApiDeps, row: WorkspaceRow) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), DISK_USAGE_WAIT_MS)));
  const usage = await Promise.race([deps.driver.volumeUsage(workspaceRef(row)).catch(() => undefined), late]);
  clearTimeout(timer);
  if (!usage || row.deleted_at) return undefined;
  const limit = row.storage_gib * 2 ** 30;
  return { bytes: usage.bytes, limit_bytes: limit, percent: Math.floor((usage.bytes * 100) / limit), enforced: usage.enforced ?? false };
}

export function registerWorkspaceRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/workspaces',
    {
      config: { access: 'user', audit: 'workspace.create' },
      schema: { summary: 'Create a workspace from a git repository or empty (an operation)', tags: ['workspaces'], body: NewWorkspaceSchema, response: { 202: OperationSchema } },
    },
    async (request, reply) => {
      // validation filled the schema's defaults
      const body = request.body as WithDefaults<typeof request.body, 'base_image' | 'idle_timeout_minutes' | 'restricted'>;
      const user = request.principal!.user;
      const access = await teamAccess(deps.pool, user, body.team_id);
      request.auditTeamId = body.team_id;
      requirePermission(access.permissions, 'workspace.create');
      if (body.git) await checkRepository(body.git.repo, deps.config.allowLocalRepositories);
      refuseBaseImageWithoutImages(body.base_image, deps.images);
      const plan = chosenWorkspacePlan(deps.config.plans, body.plan);
      const storageGib = body.storage_gib ?? plan.storageGib;
      await checkQuota(deps, body.team_id, storageGib);
      await refuseOverCapacity(deps.pool, deps.config.plans, body.team_id, plan, 'The workspace');
      const status = initialStatus(body.git !== undefined);
      const now = deps.clock.now();
      try {
        const operation = await withTransaction(deps.pool, async (db) => {
          const row = await insertWorkspace(db, {
            teamId: body.team_id,
            name: body.name,
            plan: plan.id,
            baseImage: body.base_image,
            git: body.git ? { provider: body.git.provider, repo: body.git.repo, ref: body.git.ref ?? null } : null,
            storageGib,
            restricted: body.restricted,
            egress: body.egress,
            idleTimeoutMinutes: body.idle_timeout_minutes,
            state: status.state,
            statusDetail: status.statusDetail,
            createdBy: user.id,
            at: now,
            firstUid: deps.config.defaultUid,
          });
          request.auditTarget = `/workspaces/${row.id}`;
          await publishEvent(db, { type: 'workspace.created', at: now.toISOString(), team_id: row.team_id, workspace_id: row.id, workspace: workspaceView(row, workspaceUrls(deps)) });
          return enqueueOperation(db, { kind: 'workspace.create', target: `/workspaces/${row.id}`, teamId: row.team_id, createdBy: user.id, input: { workspace_id: row.id }, detail: status.statusDetail, at: now });
        });
        return acceptOperation(reply, operation);
      } catch (error) {
        if (isUniqueViolation(error)) throw problem('name-taken', 409, `The team has a workspace named "${body.name}" already.`);
        throw error;
      }
    },
  );

  app.get(
    '/workspaces',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Workspaces you can see; deleted=true lists the recently deleted',
        tags: ['workspaces'],
        querystring: Type.Object({ ...PageQuery, team: Type.Optional(Id), deleted: Type.Optional(Type.Boolean({ default: false })) }),
        response: { 200: Page(WorkspaceSchema) },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const user = request.principal!.user;
      const limit = pageLimit(query);
      const scope = `workspaces:${query.team ?? ''}:${query.deleted}`;
      const after = query.cursor ? await cursorPosition(deps, user, scope, query.cursor, query.team) : 0;
      // The caller's standing on the teams and the page's keys in one statement, the items kept by row version
      // (workspaces/list-page.ts): the same bytes as JSON.stringify of the views (workspaces/view-json.ts), sent as
      // they are, with their media type (Fastify serializes no string).
      const permissionsOf = (teamRole: string | null, orgRole: string | null) => workspacePermissionsBytes(user.isAdmin, teamRole, orgRole);
      const filter = { userId: user.id, isAdmin: user.isAdmin, teamId: query.team, deleted: query.deleted ?? false };
      const page = await readListPage(deps.pool, keptItemsOf(deps), filter, after, limit, permissionsOf);
      if (page === undefined) throw notFound('team');
      const next = page.nextAfter === undefined ? '' : `,"next_cursor":${JSON.stringify(deps.cursors.encode(scope, page.nextAfter))}`;
      // (the schema types the page as an object; its bytes are that object's JSON)
      return reply.type('application/json; charset=utf-8').send(Buffer.concat([PAGE_OPEN, ...page.items, Buffer.from(`]${next}}`)]) as never);
    },
  );

  app.get(
    '/workspaces/:ws',
    { config: { access: 'user' }, schema: { summary: 'Read a workspace', tags: ['workspaces'], params: WorkspaceParams, response: { 200: WorkspaceSchema } } },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      setEtag(reply, row.version);
      return { ...viewFor(deps, row, access), dev_service: await readDevService(deps, row), disk_usage: await diskUsageOf(deps, row), editor: deps.driver.editor, ...(await workspaceActivity(deps, row)) };
    },
  );

  app.patch(
    '/workspaces/:ws',
    {
      config: { access: 'user', audit: 'workspace.update' },
      schema: { summary: 'Rename a workspace or change its settings, or correct the repository of a failed clone (If-Match required)', tags: ['workspaces'], params: WorkspaceParams, headers: IfMatchHeaders, body: WorkspacePatchSchema, response: { 200: WorkspaceSchema } },
    },
    async (request, reply) => {
      const { row, access } = await workspaceAccess(deps, request);
      requirePermission(access.permissions, 'workspace.update');
      const version = requireIfMatch(request, row.version);
      const { git, ...body } = request.body;
      const changes = { ...body, ...(git ? await correctedRepository(deps, row, git) : {}) };
      try {
        const saved = await withTransaction(deps.pool, async (db) => {
          const updated = await updateWorkspace(db, row.id, changes, deps.clock.now(), version);
          if (updated) await publishEvent(db, { type: 'workspace.updated', at: updated.updated_at.toISOString(), team_id: updated.team_id, workspace_id: updated.id, workspace: workspaceView(updated, workspaceUrls(deps)) });
          return updated;
        });
        if (!saved) throw preconditionFailed();
        // its pods take a changed egress at once (the local driver), else at their next start
        if (body.egress !== undefined) await deps.driver.applyEgress?.(workspaceRef(saved)).catch((error: Error) => deps.log(`egress of workspace ${saved.id}: ${error.message}`));
        setEtag(reply, saved.version);
        return viewFor(deps, saved, access);
      } catch (error) {
        if (isUniqueViolation(error)) throw problem('name-taken', 409, `The team has a workspace named "${body.name}" already.`);
        throw error;
      }
    },
  );
}

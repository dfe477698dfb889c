// Workspace environment variables and the workspace's vault of secrets (issue 6, item 1). Secret values go in,
// never out: lists show names and times only. Teardown and Sync keep both.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requirePermission } from '../../auth/access.ts';
import { notFound, problem } from '../../core/problems.ts';
import { withTransaction } from '../../store/database.ts';
import { deleteSecret, deleteVariable, findVaultId, listSecrets, listVariables, setSecret, setVariable, vaultOf } from '../../store/variables.ts';
import type { ApiDeps, RequestWithParams } from '../context.ts';
import { DateTime, Id } from '../schemas.ts';
import { workspaceAccess } from './workspaces.ts';

const VariableName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
  patternErrorMessage: 'must be a variable name: letters, digits and _, not starting with a digit, at most 128 characters',
});
const NamedParams = Type.Object({ ws: Id, name: VariableName });
const Value = Type.Object({ value: Type.String({ maxLength: 65536 }) }, { additionalProperties: false });
const VariableSchema = Type.Object({ name: Type.String(), value: Type.String(), created_at: DateTime, updated_at: DateTime });
const SecretSchema = Type.Object({ name: Type.String(), created_at: DateTime, updated_at: DateTime });
const times = (row: { created_at: Date; updated_at: Date }) => ({ created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() });

/** `SVC_` names belong to the platform (spec 2.3, 2.8). */
function checkName(name: string): void {
  if (/^SVC_/.test(name)) {
    throw problem('validation', 422, `${name} starts with SVC_, which is reserved for the platform.`, {
      errors: [{ pointer: '/name', message: 'must not start with SVC_', in: 'path' }],
    });
  }
}

async function access(deps: ApiDeps, request: RequestWithParams<{ ws: number }>, permission: 'landscape.view' | 'variables.manage') {
  const found = await workspaceAccess(deps, request);
  requirePermission(found.access.permissions, permission);
  if (found.row.deleted_at) throw problem('conflict', 409, 'The workspace is deleted; restore it first.');
  return found.row;
}

export function registerVariableRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['variables'];
  const params = Type.Object({ ws: Id });

  app.get('/workspaces/:ws/variables', { config: { access: 'user' }, schema: { summary: "The workspace's environment variables", tags, params, response: { 200: Type.Object({ items: Type.Array(VariableSchema) }) } } }, async (request) => {
    const row = await access(deps, request, 'landscape.view');
    return { items: (await listVariables(deps.pool, row.id)).map((v) => ({ name: v.name, value: v.value, ...times(v) })) };
  });

  app.put('/workspaces/:ws/variables/:name', { config: { access: 'user', audit: 'variable.set' }, schema: { summary: 'Set an environment variable', tags, params: NamedParams, body: Value, response: { 200: VariableSchema } } }, async (request) => {
    const row = await access(deps, request, 'variables.manage');
    const { name } = request.params;
    checkName(name);
    const saved = await setVariable(deps.pool, row.id, name, request.body.value, deps.clock.now());
    return { name: saved.name, value: saved.value, ...times(saved) };
  });

  app.delete('/workspaces/:ws/variables/:name', { config: { access: 'user', audit: 'variable.delete' }, schema: { summary: 'Delete an environment variable', tags, params: NamedParams, response: { 204: Type.Null() } } }, async (request, reply) => {
    const row = await access(deps, request, 'variables.manage');
    if (!(await deleteVariable(deps.pool, row.id, request.params.name))) throw notFound('variable');
    return reply.code(204).send(null);
  });

  app.get('/workspaces/:ws/secrets', { config: { access: 'user' }, schema: { summary: "Names of the secrets in the workspace's vault (never their values)", tags, params, response: { 200: Type.Object({ vault_id: Type.Optional(Id), items: Type.Array(SecretSchema) }) } } }, async (request) => {
    const row = await access(deps, request, 'landscape.view');
    const vaultId = await findVaultId(deps.pool, row.id);
    const secrets = vaultId === undefined ? [] : await listSecrets(deps.pool, vaultId);
    return { vault_id: vaultId, items: secrets.map((s) => ({ name: s.name, ...times(s) })) };
  });

  app.put('/workspaces/:ws/secrets/:name', { config: { access: 'user', audit: 'secret.set' }, schema: { summary: 'Set a secret; the value is encrypted at rest and never shown again', tags, params: NamedParams, body: Value, response: { 200: SecretSchema } } }, async (request) => {
    const row = await access(deps, request, 'variables.manage');
    const { name } = request.params;
    const saved = await withTransaction(deps.pool, async (db) => {
      const vaultId = await vaultOf(db, row.id, deps.clock.now());
      const sealed = deps.secrets.seal(request.body.value, `vault:${vaultId}:${name}`);
      return setSecret(db, vaultId, name, sealed, deps.clock.now());
    });
    return { name: saved.name, ...times(saved) };
  });

  app.delete('/workspaces/:ws/secrets/:name', { config: { access: 'user', audit: 'secret.delete' }, schema: { summary: 'Delete a secret', tags, params: NamedParams, response: { 204: Type.Null() } } }, async (request, reply) => {
    const row = await access(deps, request, 'variables.manage');
    const vaultId = await findVaultId(deps.pool, row.id);
    if (vaultId === undefined || !(await deleteSecret(deps.pool, vaultId, request.params.name))) throw notFound('secret');
    return reply.code(204).send(null);
  });
}

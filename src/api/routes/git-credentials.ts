// The caller's own git credentials (issue 34, item 2): an HTTPS token or password per git host, added, listed
// without the secret, removed; and the SSH key pair svc makes for them, shown as its public key and rotated.
// Values go in and never come out: the workspace's clone and its git use them.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { notFound, problem } from '../../core/problems.ts';
import { gitCredentialPlace, sshKeyPlace } from '../../git/credentials.ts';
import { normalizeGitHost } from '../../git/hosts.ts';
import { generateSshKey } from '../../git/ssh-key.ts';
import { deleteGitCredential, findSshKey, listGitCredentials, setGitCredential, setSshKey, type GitCredentialRow, type SshKeyRow } from '../../store/git-credentials.ts';
import type { ApiDeps } from '../context.ts';
import { DateTime, iso } from '../schemas.ts';

const Host = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[A-Za-z0-9.:\\[\\]-]+$',
  patternErrorMessage: 'must be a host or host:port',
  description: 'git host as clone URLs name it: `github.com`, `git.example.com:8443`',
});
const NewCredential = Type.Object(
  {
    host: Host,
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 256, pattern: '^[^:\\s]+$', patternErrorMessage: 'must have no colon and no white space', description: 'the account at the host; `x-access-token` when absent (a token of GitHub, Gitea or GitLab)' }),
    ),
    password: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[^\\r\\n]+$', patternErrorMessage: 'must be one line', description: 'a token or password; sealed at rest and never shown again' }),
  },
  { additionalProperties: false },
);
const CredentialSchema = Type.Object({ host: Type.String(), username: Type.String(), created_at: DateTime, updated_at: DateTime });
const SshKeySchema = Type.Object({
  public_key: Type.String({ description: 'the line to paste at the git host (`ssh-ed25519 AAAA… you@example.com`)' }),
  fingerprint: Type.String({ description: '`SHA256:…`, as `ssh-keygen -l` and git hosts show it' }),
  created_at: DateTime,
});
const HostParams = Type.Object({ host: Host });
const tags = ['me'];

const credentialView = (row: GitCredentialRow) => ({ host: row.host, username: row.username, created_at: iso(row.created_at), updated_at: iso(row.updated_at) });
const keyView = (row: SshKeyRow) => ({ public_key: row.public_key, fingerprint: row.fingerprint, created_at: iso(row.created_at) });

function hostName(text: string, where?: 'path'): string {
  const host = normalizeGitHost(text);
  if (host === undefined) {
    throw problem('validation', 422, `"${text}" is not a git host (host or host:port, as in clone URLs).`, {
      errors: [{ pointer: '/host', message: 'must be a host or host:port', ...(where ? { in: where } : {}) }],
    });
  }
  return host;
}

export function registerGitCredentialRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/me/git-credentials',
    { config: { access: 'user' }, schema: { summary: 'Your git credentials per host (without their secrets)', tags, response: { 200: Type.Object({ items: Type.Array(CredentialSchema) }) } } },
    async (request) => ({ items: (await listGitCredentials(deps.pool, request.principal!.user.id)).map(credentialView) }),
  );

  app.post(
    '/me/git-credentials',
    {
      config: { access: 'user', audit: 'git_credential.set' },
      schema: {
        summary: 'Add or replace your credential for a git host; clones of your workspaces and git inside them use it',
        tags,
        body: NewCredential,
        response: { 200: CredentialSchema, 201: CredentialSchema },
      },
    },
    async (request, reply) => {
      const userId = request.principal!.user.id;
      const host = hostName(request.body.host);
      const sealed = deps.secrets.seal(request.body.password, gitCredentialPlace(userId, host));
      const saved = await setGitCredential(deps.pool, { userId, host, username: request.body.username ?? 'x-access-token', sealed, at: deps.clock.now() });
      request.auditTarget = `/me/git-credentials/${host}`;
      reply.code(saved.created ? 201 : 200);
      return credentialView(saved);
    },
  );

  app.delete(
    '/me/git-credentials/:host',
    { config: { access: 'user', audit: 'git_credential.delete' }, schema: { summary: 'Remove your credential for a git host', tags, params: HostParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      const host = hostName(request.params.host, 'path');
      request.auditTarget = `/me/git-credentials/${host}`;
      if (!(await deleteGitCredential(deps.pool, request.principal!.user.id, host))) throw notFound('git credential');
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/me/ssh-key',
    { config: { access: 'user' }, schema: { summary: 'The public half of your SSH key (404 until one is made)', tags, response: { 200: SshKeySchema } } },
    async (request) => {
      const row = await findSshKey(deps.pool, request.principal!.user.id);
      if (!row) throw notFound('SSH key');
      return keyView(row);
    },
  );

  app.post(
    '/me/ssh-key',
    {
      config: { access: 'user', audit: 'ssh_key.rotate' },
      schema: {
        summary: 'Make your SSH key pair (201), or replace it with a new one (200: rotate; the old key stops working in svc)',
        tags,
        response: { 200: SshKeySchema, 201: SshKeySchema },
      },
    },
    async (request, reply) => {
      const user = request.principal!.user;
      const pair = generateSshKey(user.email);
      const sealed = deps.secrets.seal(pair.privatePem, sshKeyPlace(user.id));
      const saved = await setSshKey(deps.pool, { userId: user.id, publicKey: pair.publicKey, fingerprint: pair.fingerprint, sealed, at: deps.clock.now() });
      reply.code(saved.created ? 201 : 200);
      return keyView(saved);
    },
  );
}

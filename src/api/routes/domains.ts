// A team's custom domains (spec 2.7, 3.6, 4.10, issue 20): added, listed, read, changed, removed, and checked again
// on request. Members read them (team.view); adding, changing and removing is a team setting (team.update).
// Every change announces domain.updated to those who see the team.
import { randomBytes, randomUUID } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requirePermission, teamAccess } from '../../auth/access.ts';
import { notFound, problem, validationProblem } from '../../core/problems.ts';
import { announceDomain } from '../../domains/checker.ts';
import { isInstallationName, normalizeDomainName } from '../../domains/names.ts';
import { certificateKeyPlace } from '../../domains/certificates.ts';
import { checkUploadedCertificate } from '../../domains/uploaded-certificate.ts';
import { saveCertificate } from '../../store/domain-certificates.ts';
import { checkRouteWorkspaces, DEFAULT_BODY_LIMIT_BYTES, DEFAULT_TIMEOUT_SECONDS, normalizeRoutes } from '../../domains/settings.ts';
import { isUniqueViolation, withTransaction } from '../../store/database.ts';
import {
  deleteCustomDomain,
  findCustomDomain,
  findCustomDomainsByName,
  insertCustomDomain,
  listCustomDomains,
  scheduleDomainCheck,
  updateCustomDomainSettings,
  type CustomDomainRow,
} from '../../store/custom-domains.ts';
import type { ApiDeps } from '../context.ts';
import { preconditionFailed, requireIfMatch, setEtag } from '../conventions/etag.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { Id, IfMatchHeaders, Uuid } from '../schemas.ts';
import { DomainChangeBody, DomainSchema, domainView, NewDomainBody } from './domain-schemas.ts';

const TeamParams = Type.Object({ team: Id });
const DomainParams = Type.Object({ team: Id, domain: Uuid });
const tags = ['domains'];

const taken = (name: string) => problem('name-taken', 409, `The domain ${name} is taken: this team has it, or another team has verified it.`);

export function registerDomainRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const view = (row: CustomDomainRow) => domainView(row, deps.domains.settings);

  /** The domain of the path, seen by the caller with `permission` on its team; 404 when it is not the team's. */
  async function domainOf(request: FastifyRequest, params: { team: number; domain: string }, permission: 'team.view' | 'team.update') {
    const access = await teamAccess(deps.pool, request.principal!.user, params.team);
    request.auditTeamId = access.team.id;
    const row = await findCustomDomain(deps.pool, params.domain);
    if (!row || row.team_id !== access.team.id) throw notFound('domain');
    requirePermission(access.permissions, permission);
    return row;
  }

  app.get(
    '/teams/:team/domains',
    {
      config: { access: 'user' },
      schema: { summary: "The team's custom domains by name", tags, params: TeamParams, querystring: Type.Object(PageQuery), response: { 200: Page(DomainSchema) } },
    },
    async (request) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      requirePermission(access.permissions, 'team.view');
      const limit = pageLimit(request.query);
      const scope = `domains:${access.team.id}`;
      const after = request.query.cursor ? deps.cursors.decode<string>(scope, request.query.cursor) : undefined;
      return pageOf(await listCustomDomains(deps.pool, access.team.id, after, limit), limit, view, (last) => deps.cursors.encode(scope, last.name));
    },
  );

  app.post(
    '/teams/:team/domains',
    {
      config: { access: 'user', audit: 'domain.create' },
      schema: {
        summary: "Add a custom domain: it serves once the TXT record _svc.<domain> holds its token. A name another team holds unverified may be added (a claim): the first team whose token the record holds keeps it",
        tags,
        params: TeamParams,
        body: NewDomainBody,
        response: { 201: DomainSchema },
      },
    },
    async (request, reply) => {
      const access = await teamAccess(deps.pool, request.principal!.user, request.params.team);
      request.auditTeamId = access.team.id;
      requirePermission(access.permissions, 'team.update');
      const body = request.body;
      const normal = normalizeDomainName(body.name);
      if (!normal.ok) throw problem('validation', 422, `"${body.name}" is not a domain name.`, { errors: [{ pointer: '/name', message: normal.reason }] });
      if (isInstallationName(normal.name, deps.config.workspaceDomain, new URL(deps.config.baseUrl).hostname)) {
        throw problem('validation', 422, `${normal.name} is an address of this installation, not a custom domain.`, { errors: [{ pointer: '/name', message: 'must not be under the workspace domain or the console host' }] });
      }
      const routes = normalizeRoutes(body.routes ?? []);
      // A name another team holds unverified may be added too: a claim, proven by this team's own TXT token (checker.ts).
      const holders = await findCustomDomainsByName(deps.pool, normal.name);
      if (holders.some((d) => d.team_id === access.team.id || d.verified_at !== null)) throw taken(normal.name);
      const at = deps.clock.now();
      const row = await withTransaction(deps.pool, async (db) => {
        await checkRouteWorkspaces(db, access.team.id, routes);
        const inserted = await insertCustomDomain(db, {
          id: randomUUID(),
          teamId: access.team.id,
          name: normal.name,
          token: `svc-verify=${randomBytes(18).toString('base64url')}`,
          routes,
          timeoutSeconds: body.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
          bodyLimitBytes: body.body_limit_bytes ?? DEFAULT_BODY_LIMIT_BYTES,
          restricted: body.restricted ?? false,
          certificate: 'waits-for-verification',
          at,
        });
        await announceDomain(db, inserted, at);
        return inserted;
      }).catch((error) => {
        throw isUniqueViolation(error) ? taken(normal.name) : error;
      });
      deps.domains.checker.checkSoon();
      const path = `/teams/${access.team.id}/domains/${row.id}`;
      request.auditTarget = path;
      setEtag(reply, row.version);
      reply.code(201).header('location', `/api/v1${path}`);
      return view(row);
    },
  );

  app.get(
    '/teams/:team/domains/:domain',
    { config: { access: 'user' }, schema: { summary: 'Read a custom domain: routes, verification and certificate', tags, params: DomainParams, response: { 200: DomainSchema } } },
    async (request, reply) => {
      const row = await domainOf(request, request.params, 'team.view');
      setEtag(reply, row.version);
      return view(row);
    },
  );

  app.patch(
    '/teams/:team/domains/:domain',
    {
      config: { access: 'user', audit: 'domain.update' },
      schema: { summary: "Change a custom domain's routes, timeout, body limit or restriction", tags, params: DomainParams, headers: IfMatchHeaders, body: DomainChangeBody, response: { 200: DomainSchema } },
    },
    async (request, reply) => {
      const row = await domainOf(request, request.params, 'team.update');
      const version = requireIfMatch(request, row.version);
      const body = request.body;
      const routes = body.routes ? normalizeRoutes(body.routes) : row.routes;
      const at = deps.clock.now();
      const saved = await withTransaction(deps.pool, async (db) => {
        if (body.routes) await checkRouteWorkspaces(db, row.team_id, routes);
        const next = await updateCustomDomainSettings(db, row.id, version, {
          routes,
          timeoutSeconds: body.timeout_seconds ?? row.timeout_seconds,
          bodyLimitBytes: body.body_limit_bytes ?? row.body_limit_bytes,
          restricted: body.restricted ?? row.restricted,
        }, at);
        if (next) await announceDomain(db, next, at);
        return next;
      });
      if (!saved) throw preconditionFailed();
      setEtag(reply, saved.version);
      return view(saved);
    },
  );

  app.delete(
    '/teams/:team/domains/:domain',
    {
      config: { access: 'user', audit: 'domain.delete' },
      schema: { summary: 'Remove a custom domain: it stops serving at once and its name is free again', tags, params: DomainParams, headers: IfMatchHeaders, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      const row = await domainOf(request, request.params, 'team.update');
      requireIfMatch(request, row.version);
      await withTransaction(deps.pool, async (db) => {
        const removed = await deleteCustomDomain(db, row.id);
        if (removed) await announceDomain(db, removed, deps.clock.now());
      });
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/teams/:team/domains/:domain/check',
    {
      config: { access: 'user', audit: 'domain.check' },
      schema: { summary: 'Check the TXT record again now (the status moves to Checking, then to what the check finds)', tags, params: DomainParams, response: { 202: DomainSchema } },
    },
    async (request, reply) => {
      const row = await domainOf(request, request.params, 'team.update');
      const scheduled = await scheduleDomainCheck(deps.pool, row.id, deps.clock.now());
      if (!scheduled) throw notFound('domain');
      deps.domains.checker.checkSoon();
      return reply.code(202).send(view(scheduled));
    },
  );

  app.put(
    '/teams/:team/domains/:domain/certificate',
    {
      config: { access: 'user', audit: 'domain.certificate.upload' },
      schema: {
        summary: "Upload the domain's certificate and key (Uploaded: the installation no longer issues one); checked: chain, key match, name, validity",
        tags,
        params: DomainParams,
        body: Type.Object(
          {
            certificate: Type.String({ minLength: 1, maxLength: 65536, description: 'PEM certificates, the leaf first, then its chain' }),
            private_key: Type.String({ minLength: 1, maxLength: 16384, description: "PEM private key of the leaf (unencrypted); sealed at rest, never shown" }),
          },
          { additionalProperties: false },
        ),
        response: { 200: DomainSchema },
      },
    },
    async (request) => {
      const row = await domainOf(request, request.params, 'team.update');
      const now = deps.clock.now();
      const checked = checkUploadedCertificate(row.name, request.body.certificate, request.body.private_key, now);
      if (!checked.ok) throw validationProblem(checked.errors, 'The certificate cannot serve this domain.');
      const sealed = deps.secrets.seal(request.body.private_key, certificateKeyPlace(row.id));
      return view(await saveCertificateChange(row, { state: 'uploaded', detail: `Uploaded; valid until ${checked.notAfter.toISOString()}.`, served: { pem: request.body.certificate, sealed, notAfter: checked.notAfter } }));
    },
  );

  app.delete(
    '/teams/:team/domains/:domain/certificate',
    {
      config: { access: 'user', audit: 'domain.certificate.delete' },
      schema: { summary: 'Remove an uploaded certificate: the installation manages the certificate again', tags, params: DomainParams, response: { 200: DomainSchema } },
    },
    async (request) => {
      const row = await domainOf(request, request.params, 'team.update');
      if (row.certificate !== 'uploaded') throw problem('conflict', 409, 'The domain has no uploaded certificate.');
      const state = row.verification === 'verified' ? deps.domains.certificateWhenVerified(row) : 'waits-for-verification';
      const saved = await saveCertificateChange(row, { state, detail: null, served: null });
      deps.domains.checker.checkSoon();
      return view(saved);
    },
  );

  async function saveCertificateChange(row: CustomDomainRow, change: { state: CustomDomainRow['certificate']; detail: string | null; served: Parameters<typeof saveCertificate>[2]['served'] }): Promise<CustomDomainRow> {
    const at = deps.clock.now();
    await withTransaction(deps.pool, async (db) => {
      const saved = await saveCertificate(db, row.id, { ...change, retryAt: null, at });
      if (saved) await announceDomain(db, saved, at);
    });
    const next = await findCustomDomain(deps.pool, row.id);
    if (!next) throw notFound('domain');
    return next;
  }
}

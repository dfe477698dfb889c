// Invitations (spec 2.7, issue 18): an org owner invites anyone into the org (and teams); a team admin invites into
// the teams they administer. The link makes the account (and signs it in) when the address has none; an existing
// account accepts it signed in by its own means (docs/decisions.md, "Invitations never sign in an existing account").
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { SESSION_COOKIE, callerUser } from '../../auth/credentials.ts';
import { teamRoles } from '../../auth/permissions.ts';
import { SESSION_ABSOLUTE_MS, sessionCookie, startSession } from '../../auth/sessions.ts';
import { NO_MAIL_SERVER, mailStateText } from '../../mail/delivery.ts';
import { MailSchema } from './mail-view.ts';
import {
  acceptInvitation,
  createInvitation,
  invitationStanding,
  renewInvitationAs,
  revokeInvitationAs,
  visibleInvitation,
} from '../../people/invitations.ts';
import { listInvitations, type InvitationRow } from '../../store/invitations.ts';
import type { ApiDeps } from '../context.ts';
import { Page, PageQuery, pageLimit, pageOf } from '../conventions/pagination.ts';
import { DateTime, Id, StringEnum, UserSchema, Uuid, iso, isoOrUndefined } from '../schemas.ts';
import { Email, userView } from './users.ts';


export const InvitationSchema = Type.Object({
  id: Uuid,
  org_id: Uuid,
  email: Type.String(),
  role: StringEnum(['owner', 'member'], { description: 'role in the organization' }),
  teams: Type.Array(Type.Object({ team_id: Id, role: StringEnum(teamRoles) })),
  state: StringEnum(['pending', 'expired', 'accepted', 'revoked']),
  mail: MailSchema,
  created_by: Type.Optional(Id),
  created_at: DateTime,
  expires_at: DateTime,
  accepted_at: Type.Optional(DateTime),
  accepted_by: Type.Optional(Id),
  revoked_at: Type.Optional(DateTime),
});

const WithLink = Type.Object({
  ...InvitationSchema.properties,
  url: Type.Optional(Type.String({ description: 'the link, shown once, only when the installation has no mail server' })),
});

const NewInvitation = Type.Object(
  {
    email: Email,
    role: Type.Optional(StringEnum(['owner', 'member'], { default: 'member', description: 'role in the organization' })),
    teams: Type.Optional(Type.Array(Type.Object({ team_id: Id, role: StringEnum(teamRoles) }, { additionalProperties: false }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'the token of the invitation link (after #invitation=)' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'your name, for an account made now' })),
  },
  { additionalProperties: false },
);

const Accepted = Type.Object({
  user: UserSchema,
  /** The new session's end: only when the account was made now (the answer then signs it in). */
  expires_at: Type.Optional(DateTime),
  invitation: InvitationSchema,
  account_created: Type.Boolean(),
});

export function invitationView(row: InvitationRow, now: Date) {
  const mail = row.mail_state
    ? {
        state: row.mail_state as 'queued',
        detail: mailStateText({ state: row.mail_state, lastError: row.mail_last_error, nextAttemptAt: row.mail_next_attempt_at, attempts: row.mail_attempts ?? 0 }),
        attempts: row.mail_attempts ?? 0,
        next_attempt_at: row.mail_state === 'retrying' ? isoOrUndefined(row.mail_next_attempt_at) : undefined,
        sent_at: isoOrUndefined(row.mail_sent_at),
      }
    : { state: 'not_sent' as const, detail: NO_MAIL_SERVER, attempts: 0 };
  return {
    id: row.id,
    org_id: row.org_id,
    email: row.email,
    role: row.org_role,
    teams: row.teams,
    state: row.state === 'pending' && row.expires_at <= now ? ('expired' as const) : row.state,
    mail,
    created_by: row.created_by ?? undefined,
    created_at: iso(row.created_at),
    expires_at: iso(row.expires_at),
    accepted_at: isoOrUndefined(row.accepted_at),
    accepted_by: row.accepted_by ?? undefined,
    revoked_at: isoOrUndefined(row.revoked_at),
  };
}

export function registerInvitationRoutes(server: FastifyInstance, deps: ApiDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const now = () => deps.clock.now();

  app.post(
    '/orgs/:org/invitations',
    {
      config: { access: 'user', audit: 'invitation.create' },
      schema: {
        summary: 'Invite someone by e-mail into the organization, and optionally into teams with a role',
        tags: ['invitations'],
        params: Type.Object({ org: Uuid }),
        body: NewInvitation,
        response: { 201: WithLink },
      },
    },
    async (request, reply) => {
      const { row, url } = await createInvitation(deps, request.principal!.user, request.params.org, request.body);
      request.auditTarget = `/invitations/${row.id}`;
      reply.code(201).header('location', `/api/v1/invitations/${row.id}`).header('cache-control', 'no-store');
      return { ...invitationView(row, now()), url };
    },
  );

  app.get(
    '/orgs/:org/invitations',
    {
      config: { access: 'user' },
      schema: {
        summary: 'Invitations of the organization, newest first (team admins: those into their teams)',
        tags: ['invitations'],
        params: Type.Object({ org: Uuid }),
        querystring: Type.Object({ ...PageQuery, state: Type.Optional(StringEnum(['pending', 'expired', 'accepted', 'revoked'])) }),
        response: { 200: Page(InvitationSchema) },
      },
    },
    async (request) => {
      const user = request.principal!.user;
      const standing = await invitationStanding(deps.pool, user, request.params.org);
      const query = request.query;
      const scope = `invitations:${request.params.org}:${query.state ?? ''}`;
      const after = query.cursor ? deps.cursors.decode<{ at: string; id: string }>(scope, query.cursor) : undefined;
      const rows = await listInvitations(
        deps.pool,
        { orgId: request.params.org, teamIds: standing.wholeOrg ? null : standing.managedTeams, userId: user.id, state: query.state, now: now() },
        after,
        pageLimit(query),
      );
      return pageOf(rows, pageLimit(query), (row) => invitationView(row, now()), (last) => deps.cursors.encode(scope, { at: iso(last.created_at), id: last.id }));
    },
  );

  app.get(
    '/invitations/:id',
    {
      config: { access: 'user' },
      schema: { summary: 'Read an invitation and its mail state', tags: ['invitations'], params: Type.Object({ id: Uuid }), response: { 200: InvitationSchema } },
    },
    async (request) => invitationView((await visibleInvitation(deps, request.principal!.user, request.params.id)).row, now()),
  );

  app.post(
    '/invitations/:id/revoke',
    {
      config: { access: 'user', audit: 'invitation.revoke' },
      schema: { summary: 'Revoke a pending invitation: its link stops working (no If-Match)', tags: ['invitations'], params: Type.Object({ id: Uuid }), response: { 200: InvitationSchema } },
    },
    async (request) => invitationView(await revokeInvitationAs(deps, request.principal!.user, request.params.id), now()),
  );

  app.post(
    '/invitations/:id/renew',
    {
      config: { access: 'user', audit: 'invitation.renew' },
      schema: {
        summary: 'Renew a pending or expired invitation: a new link and expiry, mailed again; the old link stops working (no If-Match)',
        tags: ['invitations'],
        params: Type.Object({ id: Uuid }),
        response: { 200: WithLink },
      },
    },
    async (request, reply) => {
      const { row, url } = await renewInvitationAs(deps, request.principal!.user, request.params.id);
      reply.header('cache-control', 'no-store');
      return { ...invitationView(row, now()), url };
    },
  );

  app.post(
    '/invitations/accept',
    {
      config: { access: 'optional', audit: 'invitation.accept' },
      schema: {
        summary:
          'Accept an invitation by its link. For an address without an account: makes the account and signs it in (browser session). ' +
          'For an address with one: only that account, signed in (session or key), may accept; the link signs nobody in.',
        tags: ['invitations'],
        body: AcceptBody,
        response: { 201: Accepted },
      },
    },
    async (request, reply) => {
      const caller = request.principal?.user;
      const { user, row, created } = await acceptInvitation(deps, request.body.token, request.body.name, caller);
      request.auditTarget = `/invitations/${row.id}`;
      reply.code(201).header('cache-control', 'no-store');
      const accepted = { user: userView(user), invitation: invitationView(row, now()), account_created: created };
      if (!created) return accepted;
      const session = await startSession(deps.pool, user.id, now());
      request.principal = { via: 'session', user: callerUser(user), sessionHash: Buffer.alloc(0) };
      reply.header('set-cookie', sessionCookie(SESSION_COOKIE, session.token, SESSION_ABSOLUTE_MS));
      return { ...accepted, expires_at: iso(session.expiresAt) };
    },
  );
}

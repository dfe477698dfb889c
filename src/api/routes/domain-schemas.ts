// The custom domain resource (spec 2.7, 3.6) as the API shows it, and the bodies that add and change one.
import { Type } from 'typebox';
import { txtRecordName } from '../../domains/names.ts';
import type { VerificationSettings } from '../../domains/verification.ts';
import type { CustomDomainRow } from '../../store/custom-domains.ts';
import { DateTime, Id, ServiceName, StringEnum, Uuid, iso } from '../schemas.ts';

export const verificationStatuses = ['not-checked', 'checking', 'verified', 'failed', 'lapsed'] as const;
export const certificateStates = ['waits-for-verification', 'being-issued', 'issued', 'failed', 'covered', 'uploaded', 'not-managed'] as const;

const RoutePath = Type.String({
  minLength: 1,
  maxLength: 256,
  pattern: '^/([A-Za-z0-9._~!$&\'()*+,;=:@%-]+(/[A-Za-z0-9._~!$&\'()*+,;=:@%-]+)*)?$',
  patternErrorMessage: 'must be / or a path of segments such as /docs/api, without a trailing slash, query or fragment',
  description: 'path prefix; matches on segment boundaries, the longest prefix wins',
});

export const DomainRouteSchema = Type.Object(
  {
    path: RoutePath,
    workspace_id: Id,
    service: Type.Optional(ServiceName),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "with service: its port (default the service's first port)" })),
    strip: Type.Optional(Type.Boolean({ description: 'remove the prefix before the request goes on (default false)' })),
  },
  { additionalProperties: false, description: "a path prefix to a workspace's dev URL (no service) or to one of its services" },
);

const Settings = {
  routes: Type.Array(DomainRouteSchema, { maxItems: 50 }),
  timeout_seconds: Type.Integer({ minimum: 1, maximum: 3600, description: 'seconds a service may take to answer before the 504 page (default 60)' }),
  body_limit_bytes: Type.Integer({ minimum: 1, maximum: 2 ** 40, description: 'largest request body before the 413 page (default 100 MiB)' }),
  restricted: Type.Boolean({ description: 'true: requests need an API key of the team in Svc-Authorization or the team sign-in (default false)' }),
};

export const NewDomainBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 254, description: 'the domain, such as shop.example.com' }),
    routes: Type.Optional(Settings.routes),
    timeout_seconds: Type.Optional(Settings.timeout_seconds),
    body_limit_bytes: Type.Optional(Settings.body_limit_bytes),
    restricted: Type.Optional(Settings.restricted),
  },
  { additionalProperties: false },
);

export const DomainChangeBody = Type.Object(
  {
    routes: Type.Optional(Settings.routes),
    timeout_seconds: Type.Optional(Settings.timeout_seconds),
    body_limit_bytes: Type.Optional(Settings.body_limit_bytes),
    restricted: Type.Optional(Settings.restricted),
  },
  { additionalProperties: false },
);

export const DomainSchema = Type.Object({
  id: Uuid,
  team_id: Id,
  name: Type.String(),
  txt_record: Type.Object({ name: Type.String({ description: '_svc.<domain>' }), value: Type.String({ description: 'the token the record must hold' }) }),
  routes: Type.Array(
    Type.Object({ path: Type.String(), workspace_id: Id, service: Type.Optional(Type.String()), port: Type.Optional(Type.Integer()), strip: Type.Boolean() }),
  ),
  timeout_seconds: Type.Integer(),
  body_limit_bytes: Type.Integer(),
  restricted: Type.Boolean(),
  verification: Type.Object({
    status: StringEnum(verificationStatuses),
    detail: Type.Optional(Type.String({ description: 'what the last check found' })),
    checked_at: Type.Optional(DateTime),
    verified_at: Type.Optional(DateTime),
    next_check_at: Type.Optional(DateTime),
    missing_since: Type.Optional(DateTime),
    lapses_at: Type.Optional(DateTime),
    remove_at: Type.Optional(Type.String({ format: 'date-time', description: 'a domain never verified is removed then' })),
  }),
  certificate: Type.Object({ state: StringEnum(certificateStates), detail: Type.Optional(Type.String()) }),
  created_at: DateTime,
  updated_at: DateTime,
});

const at = (date: Date | null) => (date ? iso(date) : undefined);

export function domainView(row: CustomDomainRow, settings: VerificationSettings) {
  const never = row.verified_at === null;
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    txt_record: { name: txtRecordName(row.name), value: row.token },
    routes: row.routes,
    timeout_seconds: row.timeout_seconds,
    body_limit_bytes: row.body_limit_bytes,
    restricted: row.restricted,
    verification: {
      status: row.verification,
      ...(row.verification_detail && { detail: row.verification_detail }),
      ...(row.checked_at && { checked_at: at(row.checked_at) }),
      ...(row.verified_at && { verified_at: at(row.verified_at) }),
      ...(row.next_check_at && { next_check_at: at(row.next_check_at) }),
      ...(row.missing_since && { missing_since: at(row.missing_since), lapses_at: iso(new Date(row.missing_since.getTime() + settings.lapseMs)) }),
      ...(never && { remove_at: iso(new Date(row.created_at.getTime() + settings.unverifiedKeepMs)) }),
    },
    certificate: { state: row.certificate, ...(row.certificate_detail && { detail: row.certificate_detail }) },
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

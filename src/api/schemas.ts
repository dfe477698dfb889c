// Schemas shared by several routes. Route-specific bodies live beside their routes.
import { Type } from 'typebox';
import { ProblemTypes, problemType } from '../core/problems.ts';

/** A string out of a fixed set, as `enum` (a union of literals would make responses validate every branch). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'int64 >= 1' });
export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });

/** Names of keys, orgs, teams: 1 to 100 chars, no leading or trailing whitespace. */
export const DisplayName = Type.String({ minLength: 1, maxLength: 100, pattern: '^\\S(.*\\S)?$', patternErrorMessage: 'must not start or end with white space' });

/** A service of a landscape, as svc.yml names it (src/landscape/names.ts). */
export const ServiceName = Type.String({
  pattern: '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$',
  patternErrorMessage: 'must be a service name: lowercase letters, digits and dashes, starting with a letter, not ending with a dash, at most 32 characters',
});

/** One error of a problem's `errors` (and of a landscape banner): where (a JSON Pointer, a line) and what. */
export const FieldErrorSchema = Type.Object(
  {
    pointer: Type.String(),
    message: Type.String(),
    in: Type.Optional(Type.String()),
    line: Type.Optional(Type.Integer({ minimum: 1 })),
    column: Type.Optional(Type.Integer({ minimum: 1 })),
    code: Type.Optional(Type.String()),
    subject: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ProblemSchema = Type.Object(
  {
    // Listed so that clients (the SDK) can tell problems apart by type; a client still expects types it does not know.
    type: StringEnum(Object.values(ProblemTypes).map(problemType), { description: 'urn:svc:problem:<name> (docs/problems.md)' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 100 }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem (application/problem+json)' },
);

export const ProblemRef = Type.Unsafe<unknown>({ $ref: 'Problem#' });

export const IfMatchHeaders = Type.Object({ 'if-match': Type.Optional(Type.String({ description: 'ETag last read' })) });

export const ApiKeySchema = Type.Object({
  id: Uuid,
  name: DisplayName,
  source: StringEnum(['console', 'cli']),
  prefix: Type.String({ description: 'svc_<id>_' }),
  created_at: DateTime,
  regenerated_at: Type.Optional(DateTime),
  last_used_at: Type.Optional(DateTime),
  expires_at: Type.Optional(DateTime),
});

export const ApiKeyWithToken = Type.Object({
  ...ApiKeySchema.properties,
  token: Type.String({ description: 'svc_<id>_<secret>; shown only in this response' }),
});

export const UserSchema = Type.Object({
  id: Id,
  email: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String(), { description: 'platform-wide permissions (platform.admin)' }),
  has_password: Type.Boolean(),
  created_at: DateTime,
});

export const MemberSchema = Type.Object({
  user_id: Id,
  email: Type.String(),
  name: Type.String(),
  role: Type.String(),
  created_at: DateTime,
});

export const OrgSchema = Type.Object({
  id: Uuid,
  name: DisplayName,
  role: Type.Optional(Type.String({ description: "the caller's role in it" })),
  permissions: Type.Array(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
});

export const TeamSchema = Type.Object({
  id: Id,
  org_id: Uuid,
  name: DisplayName,
  role: Type.Optional(Type.String({ description: "the caller's role in it" })),
  permissions: Type.Array(Type.String()),
  created_at: DateTime,
  updated_at: DateTime,
});

export const iso = (date: Date): string => date.toISOString();
export const isoOrUndefined = (date: Date | null | undefined): string | undefined => (date ? date.toISOString() : undefined);

// Schemas of a workspace's activity and keep-awake (issue 40): on GET /workspaces/{ws} and their own routes.
import { Type } from 'typebox';
import { KEEP_AWAKE_MAX_SECONDS, useKinds } from '../../workspaces/activity.ts';
import { DateTime, Id, StringEnum } from '../schemas.ts';

export const UseKindSchema = StringEnum([...useKinds], {
  description: 'dev-url, service-address (a public port), custom-domain, editor (its page and WebSockets), terminal (an exec with a tty), ssh, exec, port-forward, action (wake, start)',
});

export const KeepAwakeSchema = Type.Object(
  {
    until: DateTime,
    asked_by: Type.Optional(Id),
    asked_by_email: Type.Optional(Type.String({ description: 'who asked (absent once that account is gone)' })),
    asked_at: DateTime,
  },
  { description: 'a keep-awake in force: the idle timeout does not put the workspace to sleep before `until`; it ends by itself then' },
);

const activityFields = {
  text: Type.String({ description: 'why it is awake or asleep, in a sentence with UTC times ("asleep since 14:02 UTC: nobody used it for 30 min; last use: dev URL (w7.example.com) at 13:31 UTC")' }),
  last_use_at: Type.Optional(DateTime),
  last_use_kind: Type.Optional(UseKindSchema),
  last_use_address: Type.Optional(Type.String({ description: 'the host, service or port of the last use; absent when its kind has none (ssh)' })),
  asleep_since: Type.Optional(DateTime),
  asleep_reason_text: Type.Optional(Type.String({ description: 'while it sleeps: why ("nobody used it for 30 min", "put to sleep by hand")' })),
  sleeps_at: Type.Optional(Type.String({ format: 'date-time', description: 'while it runs: when the idle timeout puts it to sleep if nobody uses it (its keep-awake counted)' })),
};

export const ActivitySchema = Type.Object(activityFields, { description: 'what kept the workspace awake and what put it to sleep. Only on GET /workspaces/{ws}' });

export const UseSchema = Type.Object({
  kind: UseKindSchema,
  address: Type.String({ description: "the host, service (`editor` for the editor pod) or `service:port`; '' when the kind has none" }),
  first_at: Type.String({ format: 'date-time', description: 'first seen' }),
  last_at: Type.String({ format: 'date-time', description: 'last seen (recorded at most once a minute; an open stream counts while open)' }),
});

export const ActivityReportSchema = Type.Object({
  ...activityFields,
  idle_timeout_minutes: Type.Integer(),
  keep_awake: Type.Optional(KeepAwakeSchema),
  uses: Type.Array(UseSchema, { description: 'the latest use of each kind and address, the latest first' }),
});

export const KeepAwakeRequestSchema = Type.Object(
  { for_seconds: Type.Integer({ minimum: 60, maximum: KEEP_AWAKE_MAX_SECONDS, description: `how long from now (at most ${KEEP_AWAKE_MAX_SECONDS / 3600} h; ask again to go on)` }) },
  { additionalProperties: false },
);

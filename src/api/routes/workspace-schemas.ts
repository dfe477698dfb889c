// Schemas of the workspace routes.
import { Type } from 'typebox';
import { DateTime, Id, StringEnum } from '../schemas.ts';
import { ActivitySchema, KeepAwakeSchema } from './activity-schemas.ts';

/** A team's or workspace's egress setting (docs/runtime.md, "The pod network"). */
export const EgressSetting = StringEnum(['on', 'off'], {
  description: "on: pods reach the internet under the installation's egress policy; off: nothing beyond the workspace's own pods (applies at once to the pods it has)",
});

/** A DNS label, so names can appear in addresses: lowercase letters, digits and dashes, 1 to 63 chars. */
export const WorkspaceName = Type.String({
  minLength: 1,
  maxLength: 63,
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  patternErrorMessage: 'must have only lowercase letters, digits and dashes, and start and end with a letter or digit',
});

const GitProvider = Type.String({ minLength: 1, maxLength: 40, pattern: '^[a-z][a-z0-9-]*$', patternErrorMessage: 'must have only lowercase letters, digits and dashes, and start with a letter', description: 'github, gitlab, bitbucket, git, ...' });
const GitRepo = Type.String({ minLength: 1, maxLength: 2048, description: 'clone URL (https://, ssh://, git@host:path; file:// when allowed)' });
const GitRef = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s~^:?*\\[\\\\]+$', patternErrorMessage: 'must be a branch, tag or commit, without white space or any of ~ ^ : ? * [ \\', description: 'branch, tag or commit' });

export const GitSourceSchema = Type.Object({ provider: GitProvider, repo: GitRepo, ref: Type.Optional(GitRef) }, { additionalProperties: false });

/** A correction of the repository of a workspace whose clone failed (its Retry then clones this one). */
export const GitCorrectionSchema = Type.Object(
  { provider: Type.Optional(GitProvider), repo: Type.Optional(GitRepo), ref: Type.Optional(Type.Union([GitRef, Type.Null()], { description: "branch, tag or commit; null: the remote's HEAD" })) },
  { additionalProperties: false, minProperties: 1, description: 'only while the clone failed (git.cloned false, in Error or stopped); 409 otherwise' },
);

export const NewWorkspaceSchema = Type.Object(
  {
    team_id: Id,
    name: WorkspaceName,
    plan: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', patternErrorMessage: 'must be a plan id: lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters', description: "a workspace plan (GET /plans?kind=workspace); the installation's default when absent" })),
    base_image: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 512,
        pattern: '^[a-z0-9][A-Za-z0-9._:/@-]*[A-Za-z0-9]$',
        patternErrorMessage: 'must be an image reference such as debian, registry.example.com:5000/team/app:1 or name@sha256:…',
        default: 'debian',
        description: "an OCI image reference, pinned at the workspace's first start; `debian` (the default) is the installation's base image",
      }),
    ),
    git: Type.Optional(GitSourceSchema),
    storage_gib: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024, description: "the volume size; the plan's storage when absent" })),
    idle_timeout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10080, default: 30 })),
    restricted: Type.Optional(Type.Boolean({ default: false })),
    egress: Type.Optional(EgressSetting),
  },
  { additionalProperties: false },
);

export const WorkspacePatchSchema = Type.Object(
  {
    name: Type.Optional(WorkspaceName),
    idle_timeout_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10080 })),
    restricted: Type.Optional(Type.Boolean()),
    git: Type.Optional(GitCorrectionSchema),
    egress: Type.Optional(EgressSetting),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const WorkspaceSchema = Type.Object({
  id: Id,
  team_id: Id,
  name: Type.String(),
  plan: Type.String(),
  base_image: Type.String(),
  git: Type.Optional(
    Type.Object({
      provider: Type.String(),
      repo: Type.String(),
      ref: Type.Optional(Type.String()),
      cloned: Type.Boolean({ description: 'the volume holds the clone; false while cloning and after a failed clone (Retry clones again; repo and ref can be corrected with PATCH)' }),
    }),
  ),
  storage_gib: Type.Integer(),
  availability: Type.String(),
  restricted: Type.Boolean(),
  egress: StringEnum(['on', 'off'], { description: "the workspace's own egress setting: its pods reach beyond it only when this and team_egress are on" }),
  team_egress: StringEnum(['on', 'off'], { description: "its team's egress setting (PUT /teams/{team}/network-settings)" }),
  state: StringEnum(['creating', 'cloning', 'running', 'sleeping', 'waking_up', 'stopped', 'error', 'deleting']),
  status_detail: Type.String(),
  urls: Type.Object({ ide: Type.String(), dev: Type.String() }),
  dev_service: Type.Optional(
    Type.Object(
      {
        name: Type.String(),
        state: Type.String({ description: 'the service status API value (3.2)' }),
        wake_seconds: Type.Integer({ description: 'how long waking it takes: its last wake as measured, else an estimate' }),
        needs: Type.Array(Type.String(), { description: 'every service it needs, directly or through others' }),
        failing_needs: Type.Array(Type.String()),
      },
      { description: 'the service serving / on the dev URL; absent when none does. Only on GET /workspaces/{ws}, which looks at it live' },
    ),
  ),
  disk_usage: Type.Optional(
    Type.Object(
      {
        bytes: Type.Integer({ description: 'what the files of the volume take' }),
        limit_bytes: Type.Integer({ description: 'the volume size (storage_gib)' }),
        percent: Type.Integer({ description: 'bytes of limit_bytes, rounded down; from 90 the console warns, over 100 Sync and prepare are refused' }),
        enforced: Type.Boolean({ description: "true: the volume's file system ends at limit_bytes, a write past it fails (no space left); false: the size is only measured (docs/runtime.md, \"Volume size\")" }),
      },
      { description: 'the volume as measured now; only on GET /workspaces/{ws}, absent while the workspace has no volume' },
    ),
  ),
  editor: Type.Optional(
    Type.Object(
      {
        kind: StringEnum(['code-server', 'built-in', 'command'], { description: 'code-server (VS Code), the built-in fallback editor, or an operator command' }),
        version: Type.Optional(Type.String()),
        reason: Type.String({ description: 'why this editor runs, for people' }),
      },
      { description: 'the editor the workspace pod runs. Only on GET /workspaces/{ws}' },
    ),
  ),
  activity: Type.Optional(ActivitySchema),
  keep_awake: Type.Optional(KeepAwakeSchema),
  vault_id: Type.Optional(Id),
  single_node: Type.Boolean(),
  idle_timeout_minutes: Type.Integer(),
  last_archived_at: Type.Optional(DateTime),
  archived: Type.Boolean({ description: 'the volume is packed in the archive store now; restore-archive refills it' }),
  restored_from: Type.Optional(Id),
  upgrade_pending: Type.Boolean(),
  created_by: Type.Optional(Id),
  owner_id: Type.Optional(Id),
  needs_owner: Type.Boolean(),
  permissions: Type.Optional(Type.Array(Type.String())),
  created_at: DateTime,
  updated_at: DateTime,
  deleted_at: Type.Optional(DateTime),
  purge_after: Type.Optional(DateTime),
});

export const WorkspaceParams = Type.Object({ ws: Id });

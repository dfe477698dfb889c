-- Workspaces (spec 2.3) and the team storage quota they count against.

ALTER TABLE teams ADD COLUMN storage_quota_gib integer NOT NULL DEFAULT 200;

-- Every workspace runs as a UID of its own (group 0), never reused.
CREATE SEQUENCE workspace_uids START 100001;

CREATE TABLE workspaces (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  team_id              bigint NOT NULL REFERENCES teams,
  name                 text NOT NULL,
  plan                 text NOT NULL,
  base_image           text NOT NULL,
  git_provider         text,
  git_repo             text,
  git_ref              text,
  storage_gib          integer NOT NULL,
  availability         text NOT NULL DEFAULT 'always',
  restricted           boolean NOT NULL DEFAULT false,
  single_node          boolean NOT NULL DEFAULT true,
  state                text NOT NULL,
  status_detail        text NOT NULL,
  sleep_reason         text,
  before_delete        text,
  uid                  integer NOT NULL DEFAULT nextval('workspace_uids'),
  idle_timeout_minutes integer NOT NULL,
  last_activity_at     timestamptz,
  editor_host          text,
  editor_port          integer,
  last_archived_at     timestamptz,
  archive_sha256       text,
  restored_from        bigint,
  created_by           bigint REFERENCES users ON DELETE SET NULL,
  owner_id             bigint REFERENCES users ON DELETE SET NULL,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  deleted_at           timestamptz,
  purge_after          timestamptz,
  version              integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX workspaces_name ON workspaces (team_id, lower(name)) WHERE deleted_at IS NULL;
CREATE INDEX workspaces_team ON workspaces (team_id, id);
CREATE INDEX workspaces_purge ON workspaces (purge_after) WHERE deleted_at IS NOT NULL;
CREATE INDEX workspaces_running ON workspaces (last_activity_at) WHERE state = 'running';

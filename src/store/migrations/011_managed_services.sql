-- Managed services (spec 2.8, 3.4): one row per instance a landscape's `managed` service made. `number` names its
-- directory on the runtime (<data dir>/managed/<number>) and its host; `version` is kept from creation; a deleted
-- instance keeps its row (a tombstone, deleted_at set) while its data is gone.
CREATE TABLE managed_services (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  number integer GENERATED ALWAYS AS IDENTITY UNIQUE,
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  team_id bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  name text NOT NULL,
  provider text NOT NULL,
  version text NOT NULL,
  plan text NOT NULL,
  status text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);

-- At most one live instance per service name of a workspace.
CREATE UNIQUE INDEX managed_services_live_name ON managed_services (workspace_id, name) WHERE deleted_at IS NULL;
CREATE INDEX managed_services_team ON managed_services (team_id, created_at);

-- The landscape deployed to a workspace by its last Sync (or torn down since).

CREATE TABLE landscapes (
  workspace_id   bigint PRIMARY KEY REFERENCES workspaces ON DELETE CASCADE,
  profile        text,
  file_text      text NOT NULL,
  normal         json NOT NULL,
  hash           text NOT NULL,
  variables_hash text NOT NULL,
  torn_down      boolean NOT NULL DEFAULT false,
  synced_at      timestamptz NOT NULL,
  synced_by      bigint REFERENCES users ON DELETE SET NULL,
  updated_at     timestamptz NOT NULL
);

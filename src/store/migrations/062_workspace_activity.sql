-- What keeps a workspace awake (issue 40): each kind of use (dev URL, a service address, the editor, a terminal,
-- ssh, exec, a port-forward, an action) by address, when it was last seen (written at most once a minute per use);
-- when the workspace went to sleep; and a keep-awake asked by someone for background work, until a time.

CREATE TABLE workspace_uses (
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  -- dev-url, service-address, custom-domain, editor, terminal, ssh, exec, port-forward, action
  kind         text NOT NULL,
  -- the host, the service or port, the action; '' when the kind has none (ssh)
  address      text NOT NULL DEFAULT '',
  first_at     timestamptz NOT NULL,
  last_at      timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, kind, address)
);

ALTER TABLE workspaces
  ADD COLUMN slept_at timestamptz,
  ADD COLUMN keep_awake_until timestamptz,
  ADD COLUMN keep_awake_by bigint REFERENCES users ON DELETE SET NULL,
  ADD COLUMN keep_awake_asked_at timestamptz;

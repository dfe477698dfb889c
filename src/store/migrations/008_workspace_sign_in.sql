-- Sign-in on workspace addresses (spec 5, item 9): single-use short-lived links minted by the console for one
-- workspace host, and the sessions they start on that host (cookie svc_ws_session). Only SHA-256 of tokens.

CREATE TABLE workspace_sign_in_links (
  token_hash   bytea PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  host         text NOT NULL,
  user_id      bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  next_path    text NOT NULL,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);

CREATE TABLE workspace_sessions (
  token_hash   bytea PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  host         text NOT NULL,
  user_id      bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);

CREATE INDEX workspace_sessions_expiry ON workspace_sessions (expires_at);
CREATE INDEX workspace_sign_in_links_expiry ON workspace_sign_in_links (expires_at);

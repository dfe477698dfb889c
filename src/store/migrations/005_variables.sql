-- Workspace environment variables, and a vault of secrets per workspace (values encrypted by the server).

CREATE TABLE workspace_variables (
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  name         text NOT NULL,
  value        text NOT NULL,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, name)
);

CREATE TABLE vaults (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL UNIQUE REFERENCES workspaces ON DELETE CASCADE,
  created_at   timestamptz NOT NULL
);

CREATE TABLE vault_secrets (
  vault_id    bigint NOT NULL REFERENCES vaults ON DELETE CASCADE,
  name        text NOT NULL,
  -- AES-256-GCM: a random nonce, the ciphertext and its tag; the key never reaches the database.
  nonce       bytea NOT NULL,
  ciphertext  bytea NOT NULL,
  tag         bytea NOT NULL,
  key_id      text NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (vault_id, name)
);

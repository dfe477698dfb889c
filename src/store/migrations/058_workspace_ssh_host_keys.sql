-- The SSH endpoint of each workspace (issue 38): one ed25519 host key per workspace, made by svc at the first need,
-- its private half sealed like vault secrets (bound to the workspace), its public half shown in known_hosts.

CREATE TABLE workspace_ssh_host_keys (
  workspace_id bigint PRIMARY KEY REFERENCES workspaces ON DELETE CASCADE,
  -- `ssh-ed25519 AAAA...` (no comment)
  public_key   text NOT NULL,
  nonce        bytea NOT NULL,
  ciphertext   bytea NOT NULL,
  tag          bytea NOT NULL,
  key_id       text NOT NULL,
  created_at   timestamptz NOT NULL
);

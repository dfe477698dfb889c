-- Container registry credentials of a team (issue 15, item 3): one per registry host, used to pull the team's
-- private images. The password is sealed like vault secrets (AES-256-GCM, bound to team and registry); the
-- username is shown in lists.

CREATE TABLE team_registry_credentials (
  team_id     bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  -- `docker.io`, `registry.example.com:5000`: lowercase, Docker Hub's aliases as docker.io.
  registry    text NOT NULL,
  username    text NOT NULL,
  nonce       bytea NOT NULL,
  ciphertext  bytea NOT NULL,
  tag         bytea NOT NULL,
  key_id      text NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (team_id, registry)
);

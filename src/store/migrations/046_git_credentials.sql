-- Git credentials of a user (issue 34, item 2): an HTTPS token or password per git host, and one SSH key pair that
-- svc makes. Secrets are sealed like vault secrets (AES-256-GCM, bound to the user and the host or key); the
-- username, the public key and its fingerprint are shown.

CREATE TABLE user_git_credentials (
  user_id     bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  -- `github.com`, `git.example.com:8443`: lowercase host[:port].
  host        text NOT NULL,
  username    text NOT NULL,
  nonce       bytea NOT NULL,
  ciphertext  bytea NOT NULL,
  tag         bytea NOT NULL,
  key_id      text NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (user_id, host)
);

CREATE TABLE user_ssh_keys (
  user_id     bigint PRIMARY KEY REFERENCES users ON DELETE CASCADE,
  public_key  text NOT NULL,
  fingerprint text NOT NULL,
  -- the private key (PKCS#8 PEM), sealed
  nonce       bytea NOT NULL,
  ciphertext  bytea NOT NULL,
  tag         bytea NOT NULL,
  key_id      text NOT NULL,
  created_at  timestamptz NOT NULL
);

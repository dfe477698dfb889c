-- Single sign-on with OpenID Connect (issue 39): identities linked by (issuer, subject), sign-in flows in progress,
-- where a role came from (a rule of a provider, or by hand), and which provider a session came from.

CREATE TABLE oidc_identities (
  issuer          text NOT NULL,
  subject         text NOT NULL,
  provider        text NOT NULL,
  user_id         bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  email           text,
  created_at      timestamptz NOT NULL,
  last_sign_in_at timestamptz,
  PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX oidc_identities_user ON oidc_identities (user_id, provider);

-- A flow between the start (redirect to the provider) and the callback: used once; only hashes of the state and of
-- the browser binding cookie are kept.
CREATE TABLE oidc_flows (
  state_hash    bytea PRIMARY KEY,
  binding_hash  bytea NOT NULL,
  provider      text NOT NULL,
  nonce         text NOT NULL,
  code_verifier text NOT NULL,
  return_to     text NOT NULL,
  link_user_id  bigint REFERENCES users ON DELETE CASCADE,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL
);
CREATE INDEX oidc_flows_expiry ON oidc_flows (expires_at);

-- 'manual', or 'oidc:<provider>:<rule>' for a role a provider's rule gave (taken away by the same rule).
ALTER TABLE team_members ADD COLUMN source text NOT NULL DEFAULT 'manual';
ALTER TABLE org_members ADD COLUMN source text NOT NULL DEFAULT 'manual';
ALTER TABLE users ADD COLUMN admin_source text;

ALTER TABLE sessions ADD COLUMN oidc_provider text;
ALTER TABLE sessions ADD COLUMN oidc_id_token text;

-- What a rule did (its name), for entries no request made.
ALTER TABLE audit_log ADD COLUMN detail text;

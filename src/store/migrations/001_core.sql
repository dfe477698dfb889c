-- People, sign-in, API keys, organizations and teams, idempotency records, audit log.

CREATE TABLE settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE users (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email         text NOT NULL,
  name          text NOT NULL,
  password_hash text,
  is_admin      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  version       integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX users_email ON users (lower(email));

CREATE TABLE sessions (
  token_hash   bytea PRIMARY KEY,
  user_id      bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  created_at   timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE sign_in_links (
  token_hash bytea PRIMARY KEY,
  user_id    bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  created_by bigint REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);

CREATE TABLE api_keys (
  id             uuid PRIMARY KEY,
  user_id        bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  name           text NOT NULL,
  source         text NOT NULL CHECK (source IN ('console', 'cli')),
  secret_hash    bytea NOT NULL,
  created_at     timestamptz NOT NULL,
  regenerated_at timestamptz,
  last_used_at   timestamptz,
  expires_at     timestamptz,
  version        integer NOT NULL DEFAULT 1
);
CREATE INDEX api_keys_user ON api_keys (user_id, created_at DESC, id DESC);

CREATE TABLE orgs (
  id         uuid PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version    integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX orgs_name ON orgs (lower(name));

CREATE TABLE org_members (
  org_id     uuid NOT NULL REFERENCES orgs ON DELETE CASCADE,
  user_id    bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members (user_id);

CREATE TABLE teams (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id     uuid NOT NULL REFERENCES orgs,
  name       text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  version    integer NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX teams_name ON teams (org_id, lower(name));

CREATE TABLE team_members (
  team_id    bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  user_id    bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE idempotency_keys (
  user_id          bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  key              text NOT NULL,
  method           text NOT NULL,
  path             text NOT NULL,
  body_hash        bytea NOT NULL,
  state            text NOT NULL CHECK (state IN ('running', 'done')),
  status           integer,
  response_headers jsonb,
  response_body    text,
  created_at       timestamptz NOT NULL,
  expires_at       timestamptz NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

CREATE TABLE audit_log (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at        timestamptz NOT NULL,
  actor_id  bigint,
  action    text NOT NULL,
  method    text NOT NULL,
  target    text NOT NULL,
  team_id   bigint,
  outcome   integer NOT NULL,
  address   text
);
CREATE INDEX audit_log_order ON audit_log (at DESC, id DESC);
CREATE INDEX audit_log_action ON audit_log (action, at DESC);
CREATE INDEX audit_log_actor ON audit_log (actor_id, at DESC);
CREATE INDEX audit_log_team ON audit_log (team_id, at DESC);

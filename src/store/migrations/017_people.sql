-- People (issue 18): invitations of an organization (optionally into teams), the mail outbox that sends them and
-- sign-in links, and ownership transfers of workspaces. Only SHA-256 of invitation tokens is kept.

CREATE TABLE invitations (
  id          uuid PRIMARY KEY,
  org_id      uuid NOT NULL REFERENCES orgs ON DELETE CASCADE,
  email       text NOT NULL,
  org_role    text NOT NULL CHECK (org_role IN ('owner', 'member')),
  token_hash  bytea NOT NULL,
  state       text NOT NULL CHECK (state IN ('pending', 'accepted', 'revoked')),
  created_by  bigint REFERENCES users ON DELETE SET NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_by bigint REFERENCES users ON DELETE SET NULL,
  revoked_at  timestamptz,
  -- The mail that carries its current link; null when none was sent (no mail server configured).
  mail_id     uuid
);
CREATE UNIQUE INDEX invitations_token ON invitations (token_hash);
-- One pending invitation per address and organization: a second one is a renewal.
CREATE UNIQUE INDEX invitations_pending ON invitations (org_id, lower(email)) WHERE state = 'pending';
CREATE INDEX invitations_org ON invitations (org_id, created_at DESC, id DESC);

CREATE TABLE invitation_teams (
  invitation_id uuid NOT NULL REFERENCES invitations ON DELETE CASCADE,
  team_id       bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  role          text NOT NULL CHECK (role IN ('admin', 'developer', 'viewer')),
  PRIMARY KEY (invitation_id, team_id)
);
CREATE INDEX invitation_teams_team ON invitation_teams (team_id);

-- Mail to send, a durable job: a server claims a due row (FOR UPDATE SKIP LOCKED) under a lease; a row whose lease
-- ran out (its server died mid-send) is claimed again. The text is dropped once the mail went out or was given up.
CREATE TABLE mail_outbox (
  id              uuid PRIMARY KEY,
  kind            text NOT NULL CHECK (kind IN ('invitation', 'sign_in_link')),
  invitation_id   uuid REFERENCES invitations ON DELETE CASCADE,
  recipient       text NOT NULL,
  subject         text NOT NULL,
  body_text       text,
  state           text NOT NULL CHECK (state IN ('queued', 'sending', 'retrying', 'sent', 'failed', 'bounced', 'cancelled')),
  attempts        integer NOT NULL DEFAULT 0,
  last_error      text,
  next_attempt_at timestamptz NOT NULL,
  lease_owner     text,
  lease_until     timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  sent_at         timestamptz
);
CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE state IN ('queued', 'retrying', 'sending');
CREATE INDEX mail_outbox_invitation ON mail_outbox (invitation_id);

-- Ownership transfers of a workspace (spec 2.3 owner_id): offered to a team member, who accepts or declines; the
-- offerer cancels. At most one open transfer per workspace.
CREATE TABLE owner_transfers (
  id           uuid PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  team_id      bigint NOT NULL,
  from_user_id bigint REFERENCES users ON DELETE SET NULL,
  offered_by   bigint REFERENCES users ON DELETE SET NULL,
  to_user_id   bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  state        text NOT NULL CHECK (state IN ('open', 'accepted', 'declined', 'cancelled')),
  created_at   timestamptz NOT NULL,
  decided_at   timestamptz,
  decided_by   bigint REFERENCES users ON DELETE SET NULL
);
CREATE UNIQUE INDEX owner_transfers_open ON owner_transfers (workspace_id) WHERE state = 'open';
CREATE INDEX owner_transfers_workspace ON owner_transfers (workspace_id, created_at DESC, id DESC);
CREATE INDEX owner_transfers_to ON owner_transfers (to_user_id, created_at DESC, id DESC);
CREATE INDEX owner_transfers_by ON owner_transfers (offered_by, created_at DESC, id DESC);

-- A workspace whose owner left its team (or was removed) needs a new owner until a transfer is accepted.
ALTER TABLE workspaces ADD COLUMN needs_owner boolean NOT NULL DEFAULT false;

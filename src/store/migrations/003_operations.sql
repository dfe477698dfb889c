-- Durable jobs for long-running actions (spec 2.4, 3.5). A server claims a job with FOR UPDATE SKIP LOCKED and
-- holds it by a lease it renews while it works; a job whose lease ran out (its server died) is claimed again.

CREATE TABLE operations (
  id            uuid PRIMARY KEY,
  kind          text NOT NULL,
  state         text NOT NULL CHECK (state IN ('pending', 'running', 'succeeded', 'failed')),
  target        text,
  team_id       bigint,
  created_by    bigint REFERENCES users ON DELETE SET NULL,
  detail        text,
  error         jsonb,
  input         jsonb NOT NULL DEFAULT '{}',
  attempts      integer NOT NULL DEFAULT 0,
  lease_owner   text,
  lease_until   timestamptz,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  finished_at   timestamptz
);
CREATE INDEX operations_claimable ON operations (created_at) WHERE state IN ('pending', 'running');
CREATE INDEX operations_finished ON operations (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX operations_target ON operations (target, created_at DESC);

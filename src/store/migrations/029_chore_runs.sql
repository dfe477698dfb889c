-- Periodic chores run by one server of the installation at a time (src/cluster/chores.ts): a row per chore says
-- when it may run next; a server runs it only when it is the one that moved `next_run_at` forward.
CREATE TABLE chore_runs (
  name text PRIMARY KEY,
  next_run_at timestamptz NOT NULL,
  last_server text NOT NULL,
  last_started_at timestamptz NOT NULL,
  runs bigint NOT NULL
);

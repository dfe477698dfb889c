-- The servers of the installation by slot (src/cluster/presence.ts): the advisory lock of a slot says a server is
-- alive, this row which server holds it. Stage runs record the server executing them: another server aborts a run
-- only when that server is gone, and asks it (NOTIFY svc_stage_abort) to stop a run it executes.
CREATE TABLE servers (
  slot integer PRIMARY KEY,
  server_id text NOT NULL,
  started_at timestamptz NOT NULL
);
ALTER TABLE stage_runs ADD COLUMN server_id text;

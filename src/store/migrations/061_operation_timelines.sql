-- Where an operation's time went (issue 40): the phases of a create, start, wake or Sync with their durations and
-- what each did, saved while the operation runs (a running phase is kept with its start) and gone with it.
CREATE TABLE operation_timelines (
  operation_id  uuid PRIMARY KEY REFERENCES operations ON DELETE CASCADE,
  timeline      jsonb NOT NULL,
  updated_at    timestamptz NOT NULL
);

-- When the operation was queued by the database's own clock (the servers' clocks may be test clocks): a timeline's
-- first phase, its wait in the queue, starts there. Rows from before have none.
ALTER TABLE operations ADD COLUMN queued_wall_at timestamptz;
ALTER TABLE operations ALTER COLUMN queued_wall_at SET DEFAULT clock_timestamp();

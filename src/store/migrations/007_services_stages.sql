-- Running landscapes: the env each service got at Sync (templates filled, secrets among them, so sealed), the run
-- switch per service, the last service statuses seen (to tell changes), and stage runs (prepare, test, run).

ALTER TABLE landscapes
  ADD COLUMN env_nonce      bytea,
  ADD COLUMN env_ciphertext bytea,
  ADD COLUMN env_tag        bytea,
  ADD COLUMN env_key_id     text,
  ADD COLUMN statuses       json NOT NULL DEFAULT '{}';

CREATE TABLE service_switches (
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  service      text NOT NULL,
  running      boolean NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, service)
);

CREATE TABLE stage_runs (
  id           bigserial PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  stage        text NOT NULL CHECK (stage IN ('prepare', 'test', 'run')),
  state        text NOT NULL CHECK (state IN ('waiting', 'running', 'success', 'failure', 'aborted')),
  steps        json NOT NULL,
  detail       text,
  started_by   bigint REFERENCES users ON DELETE SET NULL,
  created_at   timestamptz NOT NULL,
  finished_at  timestamptz
);

CREATE UNIQUE INDEX stage_runs_one_active ON stage_runs (workspace_id, stage) WHERE state IN ('waiting', 'running');
CREATE INDEX stage_runs_by_stage ON stage_runs (workspace_id, stage, id DESC);

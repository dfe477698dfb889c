-- On-demand services (spec 2.8 `availability: on-demand`): when each was last asked for through the router, and
-- whether it sleeps now (its replicas stopped until the next request).

CREATE TABLE service_activity (
  workspace_id    bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
  service         text NOT NULL,
  last_request_at timestamptz NOT NULL,
  asleep          boolean NOT NULL DEFAULT false,
  PRIMARY KEY (workspace_id, service)
);

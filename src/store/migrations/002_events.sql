-- Live events (spec 4.6, 6). A change inserts its event here and sends NOTIFY svc_events with the row's id in the
-- same transaction: notification payloads are limited to 8000 bytes, a full workspace or operation is not.
-- Every server reads the rows it is told about once and fans them out; rows are swept after an hour.

CREATE TABLE events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at           timestamptz NOT NULL,
  type         text NOT NULL,
  team_id      bigint,
  org_id       uuid,
  workspace_id bigint,
  -- access.changed: the only recipient; operation.updated: the operation's creator, who sees it besides the team.
  user_id      bigint,
  -- The event exactly as clients receive it in `data:`; json, not jsonb, keeps the text as written (field order,
  -- no added spaces) and is never queried into.
  payload      json NOT NULL
);
CREATE INDEX events_at ON events (at);

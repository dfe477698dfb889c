-- Dumps of managed services (spec 2.4 `managed_service.dump`): one row per finished dump file, under
-- <data dir>/managed-dumps/<managed service id>/<dump id><extension>. `kind` nightly ones are kept 7 to an instance;
-- manual ones until deleted. The rows go with their managed service's (its tombstone purged, its workspace purged);
-- files without a row are removed by the nightly chore.
CREATE TABLE managed_dumps (
  id uuid PRIMARY KEY,
  managed_service_id uuid NOT NULL REFERENCES managed_services ON DELETE CASCADE,
  team_id bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  provider text NOT NULL,
  version text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('manual', 'nightly')),
  format text NOT NULL,
  extension text NOT NULL,
  media_type text NOT NULL,
  size_bytes bigint NOT NULL,
  operation_id uuid,
  created_by bigint REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL
);

CREATE INDEX managed_dumps_service ON managed_dumps (managed_service_id, created_at DESC);

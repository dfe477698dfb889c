-- The last nightly backup of a managed service (spec 2.8 `backups`): made or failed, when, by which operation, the
-- dump it made or why it failed. NULL until its first night. A failed nightly backup is shown on the managed service
-- (API `backup`, console) and announced by managed_service.updated, never silent.
ALTER TABLE managed_services ADD COLUMN last_backup jsonb;

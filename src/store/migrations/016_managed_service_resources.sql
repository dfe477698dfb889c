-- The resources a managed-service instance was last brought to by Sync: its plan's values with the file's
-- `resources` overrides (cpu in thousandths of a core, memory and storage in MiB, connections a count). The API
-- shows them; the provider applied what its runtime can (docs/managed.md says which).
ALTER TABLE managed_services ADD COLUMN resources jsonb NOT NULL DEFAULT '{}';

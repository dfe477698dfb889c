-- A team's CPU and memory quotas (spec 7 "team quota exceeded"), beside its storage quota (004): what the pods of
-- its awake workspaces may hold together, counted from their plans (docs/capacity.md). A cluster admin sets them.
ALTER TABLE teams ADD COLUMN cpu_quota_millis integer NOT NULL DEFAULT 64000;
ALTER TABLE teams ADD COLUMN memory_quota_mib integer NOT NULL DEFAULT 131072;

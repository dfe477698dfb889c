-- What started a stage run (issue 34): 'manual' (someone asked), 'clone' (svc, once after a workspace's clone) or
-- 'sync' (svc, at a Sync whose prepare steps changed since their last successful run, or that never succeeded).
ALTER TABLE stage_runs ADD COLUMN trigger text NOT NULL DEFAULT 'manual';

-- `upgrade_pending` (spec 2.3): the pod template a workspace's running editor pod was made from, and whether that
-- is older than the one a start would use now (after a platform upgrade, a new editor or new plan limits). It
-- switches over at the next sleep, stop or restart (docs/capacity.md, "Upgrade pending").
ALTER TABLE workspaces ADD COLUMN pod_template text;
ALTER TABLE workspaces ADD COLUMN upgrade_pending boolean NOT NULL DEFAULT false;

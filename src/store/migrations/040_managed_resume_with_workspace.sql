-- A volume owner change (spec 4.7) pauses a workspace's running managed-service instances while their data goes to
-- the new UID; `resume_with_workspace` marks those it paused, so that they start again (as the new UID) when their
-- workspace next starts or wakes. Anything that starts or deletes the instance meanwhile clears it.
ALTER TABLE managed_services ADD COLUMN resume_with_workspace boolean NOT NULL DEFAULT false;

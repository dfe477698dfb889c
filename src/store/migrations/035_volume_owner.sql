-- Volume owner migration (spec 4.7, docs/capacity.md "Volume owner"). A workspace's UID is the installation's
-- `security.defaultUid` (first UID of the workspaces' range) plus its own place in that range, `uid_index`, taken
-- from the never-reused sequence of 004: UIDs stay distinct per workspace and move together when the setting moves.
ALTER TABLE workspaces ADD COLUMN uid_index integer;
UPDATE workspaces SET uid_index = uid - 100001;
ALTER TABLE workspaces ALTER COLUMN uid_index SET NOT NULL;
-- While its volume is re-owned a workspace shows Stopped "Changing the owner of the volume"; this is the state it
-- goes back to afterwards (running ones start again).
ALTER TABLE workspaces ADD COLUMN before_reown text;

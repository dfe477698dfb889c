-- Whether the workspace's volume holds its source: the repository cloned (or the empty volume prepared). False from
-- creation until the clone succeeds; a workspace whose clone failed keeps false, so that Retry clones again (never
-- starts the editor on an empty volume) and its repository address and ref can still be corrected (issue 35).
ALTER TABLE workspaces ADD COLUMN source_ready boolean NOT NULL DEFAULT true;
UPDATE workspaces SET source_ready = false
  WHERE state IN ('error', 'creating', 'cloning')
    AND (state <> 'error' OR status_detail LIKE 'Cloning the repository failed%' OR status_detail LIKE 'Preparing the volume failed%');

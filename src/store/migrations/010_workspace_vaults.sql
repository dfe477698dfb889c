-- Every workspace has its vault from the start (its id is the workspace's `vault_id`, spec 2.3); workspaces made
-- before had one only once a secret was set.

INSERT INTO vaults (workspace_id, created_at) SELECT id, created_at FROM workspaces ON CONFLICT (workspace_id) DO NOTHING;

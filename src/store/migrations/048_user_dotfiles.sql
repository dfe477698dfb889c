-- A person's dotfiles repository (issue 34 item 3, `svc dotfiles set URL`): cloned into HOME of a workspace they own
-- at its first start, its install script run. NULL: none. Never a URL with a password (refused by the API).
ALTER TABLE users ADD COLUMN dotfiles_url text;

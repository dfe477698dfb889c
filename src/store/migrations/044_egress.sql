-- Pods' egress (docs/runtime.md, "The pod network"): a team's setting and a workspace's own, `on` (the
-- installation's egress policy) or `off` (nothing beyond the workspace's own pods). A workspace row carries its
-- team's setting too (`team_egress`, kept by the triggers below), so the runtime reads one row.
ALTER TABLE teams ADD COLUMN egress text NOT NULL DEFAULT 'on' CHECK (egress IN ('on', 'off'));
ALTER TABLE workspaces ADD COLUMN egress text NOT NULL DEFAULT 'on' CHECK (egress IN ('on', 'off'));
ALTER TABLE workspaces ADD COLUMN team_egress text NOT NULL DEFAULT 'on' CHECK (team_egress IN ('on', 'off'));

CREATE FUNCTION workspaces_team_egress() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.team_egress := (SELECT egress FROM teams WHERE id = NEW.team_id);
  RETURN NEW;
END $$;
CREATE TRIGGER workspaces_team_egress BEFORE INSERT OR UPDATE OF team_id ON workspaces
  FOR EACH ROW EXECUTE FUNCTION workspaces_team_egress();

CREATE FUNCTION teams_egress_to_workspaces() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE workspaces SET team_egress = NEW.egress WHERE team_id = NEW.id AND team_egress <> NEW.egress;
  RETURN NEW;
END $$;
CREATE TRIGGER teams_egress_to_workspaces AFTER UPDATE OF egress ON teams
  FOR EACH ROW WHEN (OLD.egress IS DISTINCT FROM NEW.egress) EXECUTE FUNCTION teams_egress_to_workspaces();

-- A team's managed services listed in creation order (GET /teams/{team}/managed-services pages by number), and the
-- tombstones the housekeeping purges 7 days after their deletion.
CREATE INDEX managed_services_team_number ON managed_services (team_id, number);
CREATE INDEX managed_services_tombstones ON managed_services (deleted_at) WHERE deleted_at IS NOT NULL;

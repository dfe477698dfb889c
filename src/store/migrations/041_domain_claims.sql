-- Claims of custom domain names (issue 33, item 8): a name another team holds but never verified may be added by a
-- second team too, each with its own token; the first whose TXT record proves it keeps the name and the others'
-- unverified entries are removed (src/domains/checker.ts). So a name is unique among domains that were ever verified
-- (verified_at set: verified or lapsed, never claimable) and once per team, instead of once overall.
ALTER TABLE custom_domains DROP CONSTRAINT custom_domains_name_key;
CREATE UNIQUE INDEX custom_domains_name_verified ON custom_domains (name) WHERE verified_at IS NOT NULL;
CREATE UNIQUE INDEX custom_domains_name_team ON custom_domains (name, team_id);

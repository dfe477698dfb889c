-- Custom domains of teams (spec 2.7, 3.6, issue 20). A name belongs to one team at a time (unique). Routes map
-- path prefixes to a workspace's dev URL or one of its services. Verification is re-checked by the server's domain
-- checker: a row whose next_check_at has come is claimed (check_lease_until) so that one server checks it, and its
-- result sets the next check (backoff while the TXT record is missing). A change sends NOTIFY svc_domains with the
-- domain's id so that every server's router reloads it.
CREATE TABLE custom_domains (
  id                uuid PRIMARY KEY,
  team_id           bigint NOT NULL REFERENCES teams ON DELETE CASCADE,
  name              text NOT NULL UNIQUE,
  -- The value the TXT record `_svc.<name>` must hold.
  token             text NOT NULL,
  -- [{ path, workspace_id, service?, port?, strip }], longest path first.
  routes            jsonb NOT NULL DEFAULT '[]',
  timeout_seconds   integer NOT NULL,
  body_limit_bytes  bigint NOT NULL,
  restricted        boolean NOT NULL DEFAULT false,
  -- not-checked, checking, verified, failed, lapsed
  verification      text NOT NULL DEFAULT 'not-checked',
  verification_detail text,
  checked_at        timestamptz,
  verified_at       timestamptz,
  -- The first check of a run of checks that did not find the record (lapse counts from here).
  missing_since     timestamptz,
  check_failures    integer NOT NULL DEFAULT 0,
  next_check_at     timestamptz,
  check_lease_until timestamptz,
  -- waits-for-verification, being-issued, issued, failed, covered, uploaded, not-managed
  certificate       text NOT NULL DEFAULT 'waits-for-verification',
  certificate_detail text,
  version           integer NOT NULL DEFAULT 1,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL
);
CREATE INDEX custom_domains_team ON custom_domains (team_id, name);
CREATE INDEX custom_domains_due ON custom_domains (next_check_at) WHERE next_check_at IS NOT NULL;

-- Certificates of custom domains (spec 3.6, issue 20): the one served (issued over ACME or uploaded), its private
-- key sealed with the installation's key like vault secrets, when it expires (renewal 30 days before), when a failed
-- issuance is tried again, and a lease so that one server issues at a time. HTTP-01 answers live in
-- acme_challenges so that whichever server the CA reaches answers them.
ALTER TABLE custom_domains
  ADD COLUMN certificate_pem       text,
  ADD COLUMN certificate_key_nonce bytea,
  ADD COLUMN certificate_key_data  bytea,
  ADD COLUMN certificate_key_tag   bytea,
  ADD COLUMN certificate_key_id    text,
  ADD COLUMN certificate_not_after timestamptz,
  ADD COLUMN certificate_retry_at  timestamptz,
  ADD COLUMN certificate_lease_until timestamptz;

CREATE TABLE acme_challenges (
  token             text PRIMARY KEY,
  key_authorization text NOT NULL,
  created_at        timestamptz NOT NULL
);

-- `container` services (spec 2.8): the teams a cluster administrator allowed `runAsUser` (run as root or a fixed
-- user), and the images a Sync pinned for the deployed landscape's container services, by service name
-- ({ image, digest, rootfs, config }), which its replicas run until the next Sync.
ALTER TABLE teams ADD COLUMN run_as_user_allowed boolean NOT NULL DEFAULT false;
ALTER TABLE landscapes ADD COLUMN images json NOT NULL DEFAULT '{}';

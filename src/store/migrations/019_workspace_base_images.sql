-- A workspace's `base_image` (spec 2.3) pinned at its first start: { image, digest, rootfs, config }, the root
-- filesystem of its editor pod and stage steps from then on. NULL while not pinned, and for workspaces on the
-- installation's base image (which the local driver takes from the machine's own system).
ALTER TABLE workspaces ADD COLUMN base_image_pin json;

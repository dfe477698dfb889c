#!/usr/bin/env bash
# Installs what svc needs on a Debian machine, idempotently: system packages, then the npm dependencies, then the
# console's build (console/build.sh, skipped while console/dist is newer than its sources), then the PostgreSQL
# versions of managed services (scripts/setup-postgres.sh, into the tools directory).
# Called by `npm run up`, `npm test` and .ci/run, so a new user and CI get the same set-up; under `npm run` as by
# hand (scripts/npm-env.sh drops what npm run exports, so `npm ci` reads only the user's own settings).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-env.sh
clean_npm_env

# chromium: the console's browser tests (test/console-e2e.test.ts) drive it headless; nginx and its Lua module: the data plane
# (the default; --data-plane node does without) and its tests, and bench/router's reference.
packages=(bubblewrap git iproute2 ca-certificates wrk chromium nginx libnginx-mod-http-lua)
# busybox-static: the root filesystems of container images built offline by the tests (test/helpers/images.ts).
packages+=(busybox-static)
source scripts/apt-packages.sh
ensure_packages setup "${packages[@]}"

# npm ci when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error
fi

bash console/build.sh

# The PostgreSQL majors of the managed postgres provider, into the tools directory (instant once installed).
bash scripts/setup-postgres.sh

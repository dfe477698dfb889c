#!/usr/bin/env bash
# Builds the console (React + Vite) into console/dist, which the server serves at `/`. Skipped when the build is
# newer than every source, so `npm test` and `npm run up` pay for it only after a change. `--force` always builds.
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=console/dist/index.html
if [ "${1:-}" != "--force" ] && [ -f "$stamp" ] && \
   [ -z "$(find console/src console/public console/index.html console/vite.config.ts sdk/src package-lock.json -newer "$stamp" -print -quit)" ]; then
  exit 0
fi
if [ ! -x node_modules/.bin/vite ]; then
  echo "console: vite is missing from node_modules; run npm ci (with dev dependencies) first" >&2
  exit 1
fi
echo "console: building console/dist"
node_modules/.bin/vite build console --logLevel warn

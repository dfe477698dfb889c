#!/usr/bin/env bash
# The built-in extensions a workspace's code-server starts with: the directory code-server-builtin-extensions in the
# tools directory, beside code-server, holds each extension editor/built-in-extensions.txt lists, as hard links to
# code-server's files, and a relative link to the extensions' shared node_modules (where TypeScript's server is),
# which resolves where a pod sees the tools directory. code-server's own lib/vscode/extensions is not changed: the launcher gives code-server the
# trimmed directory (--builtin-extensions-dir), or its own when a workspace asks for all of them (docs/runtime.md,
# "Built-in extensions"). Called by scripts/setup-editor.sh; idempotent: made again beside and swapped in whenever
# the list or the installed extensions differ from what the directory holds.
set -euo pipefail
scripts_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=${SVC_BUILTIN_EXTENSIONS_LIST:-$(dirname "$scripts_dir")/editor/built-in-extensions.txt}
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
extensions=$tools/node_modules/code-server/lib/vscode/extensions
target=$tools/code-server-builtin-extensions

[ -d "$extensions" ] || { echo "setup-editor-extensions: code-server is not installed in $tools (run scripts/setup-editor.sh)" >&2; exit 1; }
mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
links=(node_modules) # the names the directory holds
for name in "${wanted[@]}"; do
  if [ -f "$extensions/$name/package.json" ]; then
    links+=("$name")
  else
    echo "setup-editor-extensions: code-server has no built-in extension $name; left out" >&2
  fi
done

# Up to date when it holds these names and each extension is the installed one (its package.json the same file: an
# extension installed again, as setup-editor-yaml.sh does, is a new one).
relative=../node_modules/code-server/lib/vscode/extensions
up_to_date() {
  [ "$(cd "$target" 2>/dev/null && ls -A | sort)" = "$(printf '%s\n' "${links[@]}" | sort)" ] || return 1
  local name
  for name in "${links[@]}"; do
    [ "$name" = node_modules ] && continue
    [ ! -L "$target/$name" ] || return 1
    [ "$(stat -c %d:%i "$target/$name/package.json")" = "$(stat -c %d:%i "$extensions/$name/package.json")" ] || return 1
  done
}
if up_to_date; then
  echo "setup-editor-extensions: $((${#links[@]} - 1)) built-in extensions in $target"
  exit 0
fi

[ -w "$tools" ] || { echo "setup-editor-extensions: cannot write $tools; workspaces' code-server keeps all its built-in extensions"; exit 0; }
umask 022 # pods read the tools as the workspace UID
staging=$(mktemp -d "$tools/.code-server-builtin-extensions.XXXXXX")
trap 'rm -rf "$staging" "$tools/.code-server-builtin-extensions.link"' EXIT
# VS Code's scanner takes directories only, not links to them: each extension is a copy made of hard links (no file
# copied; the same file system), the shared node_modules a link (TypeScript finds it as ../node_modules).
for name in "${links[@]}"; do
  if [ "$name" = node_modules ]; then ln -s "$relative/$name" "$staging/$name"; else cp -al "$extensions/$name" "$staging/$name"; fi
done
chmod a+rx "$staging"
# The name is a link to the directory, swapped with one rename: a code-server starting meanwhile sees the old set or
# the new one, never none.
previous=$(readlink "$target" 2>/dev/null || true)
ln -s "$(basename "$staging")" "$tools/.code-server-builtin-extensions.link"
mv -T "$tools/.code-server-builtin-extensions.link" "$target"
trap - EXIT
case $previous in .code-server-builtin-extensions.*) rm -rf "${tools:?}/$previous" ;; esac
echo "setup-editor-extensions: $((${#links[@]} - 1)) built-in extensions in $target (of $(find "$extensions" -mindepth 2 -maxdepth 2 -name package.json | wc -l) built-in extensions)"

# Sourced by images.sh: the svc layer of the server image, /opt/svc-server as the installed CLI runs svc (bin/svc.js,
# the prebuilt dist/cli, the TypeScript sources that `svc server` runs through tsx, console/dist when built, the
# production dependencies), and its cache key. Functions only; images.sh calls them.

# The project's files the layer holds (relative, sorted), after building dist/cli; node_modules listed apart.
server_layer_files() { # PROJECT
  (cd "$1" && node scripts/build-cli.mjs >&2 && {
    printf '%s\n' bin/svc.js package.json package-lock.json scripts/build-cli.mjs
    find src sdk/src dist/cli -type f ! -name '*.test.ts' ! -name '*.tmp'
    # every file dist/cli was built from, so that it reads as fresh in the image
    node -e 'for (const input of JSON.parse(require("fs").readFileSync("dist/cli/inputs.json", "utf8")).inputs) console.log(input)'
    if [ -f console/dist/index.html ]; then find console/dist -type f; fi
  } | LC_ALL=C sort -u)
}

# The production dependencies' package directories (relative, outermost only: a nested one comes with its parent).
server_layer_packages() { # PROJECT
  local listed
  listed=$(cd "$1" && npm ls --omit=dev --all --parseable 2>/dev/null || true)
  [ -n "$listed" ] || { echo "images.sh: npm ls --omit=dev listed nothing in $1 (npm ci first)" >&2; return 1; }
  # npm prints absolute paths under the project (its first line is the project itself)
  sed -n "s|^$(printf '%s' "$1" | sed 's/[.[\*^$|]/\\&/g')/||p" <<<"$listed" | grep '^node_modules/' | LC_ALL=C sort |
    awk '{ for (i = 1; i <= n; i++) if (index($0, kept[i] "/") == 1) next; kept[++n] = $0; print }'
}

# The layer's key: the content of its files, the dependencies' list and the lock file (which fixes their content).
server_layer_key() { # PROJECT
  local project=$1
  {
    echo "server-layer=1"
    (cd "$project" && server_layer_files "$project" | xargs -d '\n' sha256sum)
    server_layer_packages "$project"
  } | sha256sum | cut -c1-16
}

stage_server_layer() { # PROJECT OUT
  local project=$1 out=$2
  local app=$out/opt/svc-server
  mkdir -p "$app" "$out/usr/local/bin" "$out/var/lib/svc"
  (cd "$project" && server_layer_files "$project" | tar -cf - --files-from=- ) | tar -C "$app" -xf -
  (cd "$project" && server_layer_packages "$project" | tar -cf - --exclude='node_modules/.bin' --files-from=- ) | tar -C "$app" -xf -
  chmod 755 "$app/bin/svc.js"
  ln -s /opt/svc/bin/node "$out/usr/local/bin/node"
  ln -s /opt/svc-server/bin/svc.js "$out/usr/local/bin/svc"
}

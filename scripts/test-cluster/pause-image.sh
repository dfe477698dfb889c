#!/usr/bin/env bash
# pause-image.sh DIR NAME: the pods' sandbox image, made offline: Kubernetes' own pause.c (from its module) built
# statically with gcc, an OCI image made with umoci, archived as DIR/pause.tar for `ctr images import`.
set -euo pipefail
out=$1
tag=${2##*:}
[ -f "$out/pause.tar" ] && exit 0
source=$(ls -d "$(go env GOMODCACHE 2> /dev/null || echo /root/go/pkg/mod)"/k8s.io/kubernetes@v*/build/pause/linux/pause.c 2> /dev/null | tail -1)
[ -n "$source" ] || { echo "pause-image: Kubernetes' pause.c is not in the Go module cache (run build.sh)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -Os -static -o "$work/pause" "$source"
umoci init --layout "$work/layout"
umoci new --image "$work/layout:$tag"
umoci unpack --rootless --image "$work/layout:$tag" "$work/bundle" > /dev/null
install -m 0755 "$work/pause" "$work/bundle/rootfs/pause"
umoci repack --image "$work/layout:$tag" "$work/bundle"
umoci config --image "$work/layout:$tag" --config.entrypoint /pause --config.user 65535:65535
(cd "$work/layout" && tar -cf "$out/pause.tar.tmp" .)
mv "$out/pause.tar.tmp" "$out/pause.tar"

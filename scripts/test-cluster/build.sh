#!/usr/bin/env bash
# Builds the test cluster's Kubernetes binaries from the Go module proxy into the tools directory, cached by version:
# ${SVC_TOOLS_DIR:-/var/cache/svc/tools}/kubernetes-<version>/bin/{etcd,kube-apiserver,kube-controller-manager,
# kube-scheduler,kubelet,kube-proxy,kubectl,kube-router}. Idempotent: a finished build (its marker) is kept.
# Needs Go (1.24 or newer) and the module proxy; takes about 8 minutes cold on 2 cores.
set -euo pipefail
version=${SVC_KUBE_VERSION:-1.34.4}
router_version=${SVC_KUBE_ROUTER_VERSION:-v2.1.0}
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
dir=$tools/kubernetes-$version
marker=$dir/built
[ -f "$marker" ] && exit 0
command -v go > /dev/null || { echo "test-cluster: Go is not installed (needed to build Kubernetes $version)" >&2; exit 3; }
mkdir -p "$dir/src/cmd/etcd" "$dir/bin"
exec 9> "$dir/.build.lock"
flock 9
[ -f "$marker" ] && exit 0
cd "$dir/src"
minor=$(echo "$version" | cut -d. -f2)
staging_version=v0.${version#*.}
{
  echo "module local/k8s"
  echo
  echo "go 1.24.0"
  echo
  echo "require k8s.io/kubernetes v$version"
  echo
  echo "replace ("
  curl -fsS "${GOPROXY_URL:-https://proxy.golang.org}/k8s.io/kubernetes/@v/v$version.mod" |
    awk -v v="$staging_version" '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { printf "\t%s => %s %s\n", $1, $1, v }'
  echo ")"
} > go.mod
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
cat > cmd/etcd/main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
export CGO_ENABLED=0 GOFLAGS=-mod=mod
go mod tidy
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/client-go/pkg/version.gitVersion=v$version"
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  if [ ! -x "../bin/$cmd" ]; then
    go build -trimpath -ldflags "$ldflags" -o "../bin/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv -f "../bin/$cmd.tmp" "../bin/$cmd"
  fi
done
if [ ! -x ../bin/etcd ]; then
  go build -trimpath -ldflags "-s -w" -o ../bin/etcd.tmp ./cmd/etcd
  mv -f ../bin/etcd.tmp ../bin/etcd
fi
if [ ! -x ../bin/kube-router ]; then
  GOBIN="$dir/bin" GOFLAGS= go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$router_version"
fi
echo "$version kube-router $router_version" > "$marker"

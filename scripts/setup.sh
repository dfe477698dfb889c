#!/usr/bin/env bash
# Installs what svc needs on a Debian machine, idempotently: system packages, then the npm dependencies, then the
# console's build (console/build.sh, skipped while console/dist is newer than its sources) and the prebuilt CLI
# (scripts/build-cli.mjs, likewise), then the PostgreSQL
# versions of managed services (scripts/setup-postgres.sh, into the tools directory).
# Called by `npm run up`, `npm test` and .ci/run, so a new user and CI get the same set-up; under `npm run` as by
# hand (scripts/npm-env.sh drops what npm run exports, so `npm ci` reads only the user's own settings).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/npm-env.sh
clean_npm_env

# chromium: the console's browser tests (test/console-e2e.test.ts) drive it headless; nginx and its Lua module: the data plane
# (the default; --data-plane node does without) and its tests, and bench/router's reference; nats-server: the managed
# nats provider (docs/managed.md). docker-registry, skopeo, umoci, busybox-static, apache2-utils (htpasswd): a loopback
# registry and images built offline for the image tests (test/helpers/oci.ts, test/helpers/images.ts). g++, make,
# python3: node-gyp builds node-pty (the terminals of `svc ssh`) during npm ci, with the headers installed with Node (below).
# dnsmasq, pebble: a DNS server and an ACME test CA on loopback for the custom-domain tests (test/helpers/dns.ts, pebble.ts).
packages=(bubblewrap git iproute2 ca-certificates wrk chromium nginx libnginx-mod-http-lua nats-server docker-registry skopeo umoci busybox-static apache2-utils g++ make python3 dnsmasq pebble)
# redis-server and redis-tools (redis-cli, for dumps and in pods): the managed redis provider (src/managed/redis-instance.ts).
# containerd, runc, containernetworking-plugins, conntrack, iptables, ipset, gcc (the static pause binary): the test
# cluster's node (scripts/test-cluster/, issue 37); Kubernetes itself is built from the Go module proxy when Go is here.
packages+=(containerd runc containernetworking-plugins conntrack iptables ipset gcc)
packages+=(redis-server redis-tools)
# nftables: the pods' firewall (src/runtime/local/pod-firewall.ts); e2fsprogs and mount (mkfs.ext4, resize2fs,
# losetup): volumes of their own size (src/runtime/local/volume-images.ts). Usually there already.
packages+=(nftables e2fsprogs mount)
# prometheus: test/metrics-prometheus.test.ts runs its own Prometheus server scraping svc's --metrics-listen address
packages+=(prometheus)
# sshd serves a repository over ssh in the git credential tests
packages+=(openssh-server)
# openssh-client, openssh-sftp-server and rsync: the workspaces' SSH endpoint (sftp subsystem, rsync inside the pod) and its tests
packages+=(openssh-client openssh-sftp-server rsync)
# mmdebstrap: the Debian root of the Kubernetes runtime images (scripts/test-cluster/images.sh, `svc images build`)
packages+=(mmdebstrap)
source scripts/apt-packages.sh
# Debian starts a system service when it installs these (a registry on :5000, dnsmasq on :53, redis on :6379, nats on
# :4222, sshd on :22); svc's tests and providers run their own processes on loopback ports, so a service set up by this install is
# turned off again. One that was installed before (the operator's) is left as it is.
system_services=(docker-registry dnsmasq redis-server nats-server ssh)
fresh_services=()
for service in "${system_services[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$service" 2>/dev/null | grep -q "install ok installed"; then fresh_services+=("$service"); fi
done
ensure_packages setup "${packages[@]}"
if command -v systemctl >/dev/null; then
  for service in "${fresh_services[@]}"; do
    systemctl is-enabled --quiet "$service" 2>/dev/null || continue
    if [ "$(id -u)" -eq 0 ]; then systemctl disable --now "$service" >/dev/null 2>&1 || true
    else sudo systemctl disable --now "$service" >/dev/null 2>&1 || true; fi
  done
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies"
  # node-gyp (node-pty) needs the running Node's headers and would download them, which fails offline: point it at
  # the ones installed with Node (the nodejs package ships /usr/include/node) unless the user chose a nodedir.
  node_prefix=$(node -p 'require("path").dirname(require("path").dirname(process.execPath))')
  if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node.h" ]; then
    export npm_config_nodedir="$node_prefix"
  fi
  npm ci --no-audit --no-fund --loglevel=error
fi

bash console/build.sh
# The prebuilt CLI that bin/svc.js runs (dist/cli; skipped while newer than its sources).
node scripts/build-cli.mjs

# The PostgreSQL majors of the managed postgres provider, into the tools directory (instant once installed).
bash scripts/setup-postgres.sh
# pg_dump, pg_restore and psql 17 for dumps of managed postgres 15 to 17 (scripts/setup-pg-client.sh; instant once installed).
bash scripts/setup-pg-client.sh

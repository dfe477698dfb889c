#!/usr/bin/env bash
# Stops the test cluster and leaves the machine as start.sh found it: its daemons and every pod's processes, the
# kubelet's mounts, kube-proxy's and kube-router's iptables chains and ipsets (and the kubelet's KUBE-FIREWALL),
# the CNI bridge, the pods' network namespaces, the sysctls as they were, the host-path provisioner's volumes, the
# cluster's directory. Idempotent.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"

# daemons first (the kubelet would restart what is killed under it), containerd last
for name in kube-router kube-proxy kubelet kube-scheduler volume-modes kube-controller-manager kube-apiserver etcd containerd; do
  pid=$(cat "$dir/pids/$name" 2> /dev/null) || continue
  kill "$pid" 2> /dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2> /dev/null
  rm -f "$dir/pids/$name"
done
# the pods: containerd's shims for this socket and everything they started
for shim in $(pgrep -f "containerd-shim-runc-v2 .*-address $containerd_socket" 2> /dev/null); do
  pkill -9 -P "$shim" 2> /dev/null
  for child in $(pgrep -P "$shim"); do pkill -9 -P "$child" 2> /dev/null; done
  kill -9 "$shim" 2> /dev/null
done
# mounts below the cluster's directories (deepest first)
for root in "$dir" "$run_dir"; do
  awk -v r="$root/" 'index($2, r) == 1 {print $2}' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m" 2> /dev/null; done
done
# iptables: kube-proxy's and kube-router's own cleanups, then any KUBE-* chain left (the kubelet's KUBE-FIREWALL too)
[ -x "$bin/kube-proxy" ] && "$bin/kube-proxy" --cleanup --proxy-mode iptables > /dev/null 2>&1
[ -x "$bin/kube-router" ] && "$bin/kube-router" --cleanup-config > /dev/null 2>&1
for cmd in iptables ip6tables; do
  command -v $cmd > /dev/null || continue
  for table in filter nat mangle raw; do
    $cmd -t $table -S 2> /dev/null | grep -E '^-A .*(KUBE-|CNI-|svc-test)' | sed 's/^-A/-D/' | while read -r rule; do eval "$cmd -t $table $rule" 2> /dev/null; done
    $cmd -t $table -S 2> /dev/null | awk '/^-N (KUBE-|CNI-)/ {print $2}' | while read -r chain; do $cmd -t $table -F "$chain" 2> /dev/null; done
    $cmd -t $table -S 2> /dev/null | awk '/^-N (KUBE-|CNI-)/ {print $2}' | while read -r chain; do $cmd -t $table -X "$chain" 2> /dev/null; done
  done
done
if command -v ipset > /dev/null; then
  ipset list -n 2> /dev/null | grep -E '^(KUBE-|kube-router|inet6:KUBE-)' | while read -r set; do ipset destroy "$set" 2> /dev/null; done
fi
# the pods' network: namespaces the CNI made, the bridge and its veths, the host-local leases
for ns in $(ip netns list 2> /dev/null | awk '/^cni-/ {print $1}'); do ip netns delete "$ns" 2> /dev/null; done
ip link delete "$bridge" 2> /dev/null
rm -rf /var/lib/cni/networks/svc-test
# sysctls as they were
if [ -f "$dir/sysctls.saved" ]; then
  while IFS== read -r name value; do sysctl -qw "$name=$value" 2> /dev/null; done < "$dir/sysctls.saved"
fi
rm -rf /tmp/hostpath_pv /tmp/hostpath-provisioner "$run_dir"
# keep the certificates' directory? no: a stopped cluster leaves nothing but the built binaries in the tools directory
rm -rf "$dir"
echo "test-cluster: stopped" >&2

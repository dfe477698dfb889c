# Shared by the test cluster's scripts: where it lives, its ports and ranges, and how its daemons are run.
version=${SVC_KUBE_VERSION:-1.34.4}
tools=${SVC_TOOLS_DIR:-/var/cache/svc/tools}
bin=$tools/kubernetes-$version/bin
dir=${SVC_TEST_CLUSTER_DIR:-/var/lib/svc-test-cluster}
run_dir=/run/svc-test-cluster
kubeconfig=$dir/kubeconfig
containerd_socket=$run_dir/containerd.sock
pause_image=registry.k8s.io/pause:3.10
bridge=svctest0
pod_cidr=10.88.0.0/16
service_cidr=10.89.0.0/16
etcd_port=23790
etcd_peer_port=23800
api_port=16443
cm_port=10257
scheduler_port=10259
kubelet_port=10250
kubelet_healthz_port=10248
proxy_metrics_port=10249
proxy_healthz_port=10256
node=$(hostname | tr 'A-Z' 'a-z')
# The API server's address: not loopback (the `kubernetes` Service refuses it); the source of the default route.
advertise=${SVC_TEST_CLUSTER_ADDRESS:-$(ip -4 route get 192.0.2.1 2> /dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -1)}
[ -n "$advertise" ] || advertise=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
sysctls=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables net.ipv4.conf.all.route_localnet)

cluster_answers() {
  [ -f "$kubeconfig" ] && [ -x "$bin/kubectl" ] && "$bin/kubectl" --kubeconfig "$kubeconfig" --request-timeout 3s get --raw /readyz > /dev/null 2>&1 &&
    "$bin/kubectl" --kubeconfig "$kubeconfig" --request-timeout 3s get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2> /dev/null | grep -qx True
}

# The machine's values of the sysctls the kubelet, kube-proxy and the bridge change, once per start (stop.sh puts them back).
save_sysctls() {
  [ -f "$dir/sysctls.saved" ] && return 0
  for name in "${sysctls[@]}"; do
    value=$(sysctl -n "$name" 2> /dev/null) && echo "$name=$value"
  done > "$dir/sysctls.saved"
}

# start_daemon NAME COMMAND...: runs it in the background, its pid in pids/NAME, its output in logs/NAME.log.
start_daemon() {
  local name=$1
  shift
  setsid "$@" > "$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/pids/$name"
}

# wait_for WHAT COMMAND...: until the command succeeds (up to 120 s), else says which daemon's log to read.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 1 240); do
    "$@" > /dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "test-cluster: $what did not come up within 120 s; logs in $dir/logs/" >&2
  tail -n 20 "$dir"/logs/*.log >&2 || true
  exit 1
}

#!/usr/bin/env bash
# Starts the project's single-node test cluster on this machine (as root): etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kube-router's firewall, built by build.sh, on
# Debian's containerd and runc with the CNI bridge plugin. Everything it makes lives in the cluster's directory
# (${SVC_TEST_CLUSTER_DIR:-/var/lib/svc-test-cluster}) or is listed there for stop.sh to undo (sysctls, iptables
# chains, ipsets, the bridge). Pods take 10.88.0.0/16, Services 10.89.0.0/16: neither is a range svc's local pods
# take (address-blocks.ts) nor the registries' 203.0.113.0/24. Idempotent: a running cluster is left as it is.
# Its last line on stdout is the path of the kubeconfig (cluster-admin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"

if cluster_answers; then
  echo "$kubeconfig"
  exit 0
fi
bash "$here/stop.sh" > /dev/null 2>&1 || true # a half-started cluster's leftovers first
bash "$here/build.sh" >&2
missing=()
for tool in containerd runc conntrack iptables ipset openssl gcc umoci; do command -v "$tool" > /dev/null || missing+=("$tool"); done
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-cluster: missing ${missing[*]} (scripts/setup.sh installs them)" >&2
  exit 3
fi
mkdir -p "$dir"/{pki,pids,logs,etcd,kubelet,cni/net.d,containerd} "$run_dir"
save_sysctls

# --- certificates and keys -----------------------------------------------------------------------------------
pki=$dir/pki
if [ ! -f "$pki/admin.crt" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=svc-test-cluster-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt" 2> /dev/null
  sign() { # name, subject, extensions
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2> /dev/null
    printf '%s\n' "$3" > "$pki/$1.ext"
    openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 3650 -extfile "$pki/$1.ext" -out "$pki/$1.crt" 2> /dev/null
  }
  sign apiserver "/CN=kube-apiserver" "subjectAltName=IP:$advertise,IP:127.0.0.1,IP:10.89.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost
extendedKeyUsage=serverAuth"
  sign kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  sign admin "/O=system:masters/CN=svc-test-admin" "extendedKeyUsage=clientAuth"
  openssl genrsa -out "$pki/sa.key" 2048 2> /dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2> /dev/null
fi
b64() { base64 -w0 < "$1"; }
cat > "$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: svc-test
  cluster: { server: "https://$advertise:$api_port", certificate-authority-data: "$(b64 "$pki/ca.crt")" }
users:
- name: admin
  user: { client-certificate-data: "$(b64 "$pki/admin.crt")", client-key-data: "$(b64 "$pki/admin.key")" }
contexts:
- name: svc-test
  context: { cluster: svc-test, user: admin }
current-context: svc-test
EOF
chmod 600 "$kubeconfig"

# --- containerd with its own root, state and socket; the pause image imported offline -----------------------
cat > "$dir/containerd/config.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$run_dir/containerd"
[grpc]
  address = "$containerd_socket"
[ttrpc]
  address = "$containerd_socket.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
EOF
cat > "$dir/cni/net.d/10-svc-test.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "svc-test",
  "plugins": [
    { "type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$pod_cidr" }]], "routes": [{ "dst": "0.0.0.0/0" }] } },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
mount --make-rshared /
start_daemon containerd containerd --config "$dir/containerd/config.toml"
wait_for "containerd" ctr --address "$containerd_socket" version
bash "$here/pause-image.sh" "$dir" "$pause_image" >&2
ctr --address "$containerd_socket" -n k8s.io images import --base-name "${pause_image%:*}" "$dir/pause.tar" > /dev/null
[ -n "$(ctr --address "$containerd_socket" -n k8s.io images ls -q "name==$pause_image")" ] ||
  { echo "test-cluster: the pause image was not imported as $pause_image" >&2; exit 1; }

# --- the control plane -------------------------------------------------------------------------------------
start_daemon etcd "$bin/etcd" --name svc-test --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster "svc-test=http://127.0.0.1:$etcd_peer_port" --listen-metrics-urls "" --log-level warn
start_daemon kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
  --advertise-address "$advertise" --bind-address "$advertise" --secure-port "$api_port" \
  --service-cluster-ip-range "$service_cidr" --service-node-port-range 31000-31999 \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-account-issuer "https://kubernetes.default.svc.cluster.local" --api-audiences "https://kubernetes.default.svc.cluster.local" \
  --kubelet-client-certificate "$pki/kubelet-client.crt" --kubelet-client-key "$pki/kubelet-client.key" \
  --kubelet-preferred-address-types Hostname,InternalIP --authorization-mode Node,RBAC \
  --enable-admission-plugins NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,ResourceQuota,PodSecurity \
  --allow-privileged=true --profiling=false
wait_for "kube-apiserver" "$bin/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz
start_daemon kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$kubeconfig" \
  --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$cm_port" --controllers '*,-nodeipam' --use-service-account-credentials=false \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --cluster-signing-cert-file "$pki/ca.crt" \
  --cluster-signing-key-file "$pki/ca.key" --enable-hostpath-provisioner --leader-elect=false --profiling=false
# The host-path provisioner makes each volume's directory 0750 root:root, and host paths take no fsGroup, so pods
# (a workspace's UID with group 0) could not write their volumes. Real storage applies the pods' fsGroup (0): group 0
# owns the volume's root, writable, setgid. The same is done here to every new volume directory.
mkdir -p /tmp/hostpath_pv
start_daemon volume-modes sh -c 'while :; do find /tmp/hostpath_pv -mindepth 1 -maxdepth 1 -type d ! -perm -2070 -exec chmod 2775 {} + 2> /dev/null; sleep 0.2; done'
start_daemon kube-scheduler "$bin/kube-scheduler" --kubeconfig "$kubeconfig" \
  --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$scheduler_port" --leader-elect=false --profiling=false

# --- the node ------------------------------------------------------------------------------------------------
cat > "$dir/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$containerd_socket
address: 127.0.0.1
port: $kubelet_port
healthzPort: $kubelet_healthz_port
readOnlyPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: "$pki/ca.crt" }
authorization: { mode: AlwaysAllow }
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%" }
imageGCHighThresholdPercent: 100
serializeImagePulls: false
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
maxPods: 110
EOF
start_daemon kubelet "$bin/kubelet" --config "$dir/kubelet/config.yaml" --kubeconfig "$kubeconfig" \
  --root-dir "$dir/kubelet/root" --hostname-override "$node" --node-ip "$advertise"
start_daemon kube-proxy "$bin/kube-proxy" --kubeconfig "$kubeconfig" --proxy-mode iptables --cluster-cidr "$pod_cidr" \
  --hostname-override "$node" --conntrack-max-per-core 0 --metrics-bind-address 127.0.0.1:$proxy_metrics_port \
  --healthz-bind-address 127.0.0.1:$proxy_healthz_port
wait_for "node $node Ready" sh -c "'$bin/kubectl' --kubeconfig '$kubeconfig' get node '$node' -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
# kube-router finds its node by name at start: only once the node is registered
start_daemon kube-router "$bin/kube-router" --kubeconfig "$kubeconfig" --hostname-override "$node" \
  --run-firewall=true --run-router=false --run-service-proxy=false --health-port 0 --metrics-port 0
k() { "$bin/kubectl" --kubeconfig "$kubeconfig" "$@"; }
k apply -f - > /dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: host-path
  annotations: { storageclass.kubernetes.io/is-default-class: "true" }
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
wait_for "the default service account" k get serviceaccount default -n default
echo "test-cluster: Kubernetes $version up (node $node, pods $pod_cidr, services $service_cidr)" >&2
echo "$kubeconfig"

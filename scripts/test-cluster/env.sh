#!/usr/bin/env bash
# Prints what the Kubernetes tests read, as NAME=value lines (for `set -a; source <(…)` or a file): the running test
# cluster's KUBECONFIG, the host's address its pods reach (SVC_TEST_CLUSTER_HOST), and the agent, base, managed
# and server images (SVC_TEST_KUBE_AGENT_IMAGE, _BASE_, _MANAGED_, _SERVER_), built offline by images.sh and imported
# into the cluster's containerd. Fails, saying why, when the cluster
# does not answer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
cluster_answers || { echo "test-cluster: the cluster does not answer (npm run test-cluster -- start)" >&2; exit 1; }
echo "KUBECONFIG=$kubeconfig"
echo "SVC_TEST_CLUSTER_HOST=$advertise"
# as SVC_TEST_KUBE_*: the server reads SVC_KUBE_*, and a test's local server must not find them in its environment
SVC_CONTAINERD_ADDRESS=$containerd_socket bash "$here/images.sh" --import | grep -E '^SVC_KUBE_[A-Z_]+_IMAGE=' | sed 's/^SVC_KUBE_/SVC_TEST_KUBE_/'

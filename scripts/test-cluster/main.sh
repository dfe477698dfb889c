#!/usr/bin/env bash
# npm run test-cluster -- start|stop|status|build|env: the project's single-node test cluster (scripts/test-cluster/).
# `env` prints the variables the Kubernetes tests read (KUBECONFIG and the images), for `eval` or a file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case "${1:-}" in
  start) exec bash "$here/start.sh" ;;
  stop) exec bash "$here/stop.sh" ;;
  build) exec bash "$here/build.sh" ;;
  env) exec bash "$here/env.sh" ;;
  status) source "$here/common.sh"; cluster_answers && echo "test-cluster: up ($kubeconfig)" || { echo "test-cluster: not running" >&2; exit 1; } ;;
  *) echo "usage: npm run test-cluster -- start|stop|status|build|env" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# A real control plane on 127.0.0.1 with lifeguard installed from the chart,
# to try by hand: etcd, kube-apiserver (and, with --controllers,
# kube-controller-manager) built from their Go modules, the
# lifeguard-webhook binary run as the chart's Deployment runs it, and the
# chart's webhook configurations registered with the API server. The same
# harness the cluster tests use (tests/src/cluster/). Needs Go 1.26+ and
# python3 (for helm); the first run builds the control plane (about 7
# minutes on 2 cores), later ones take seconds. Ctrl-C stops everything.
#
# Everything it writes (the cluster's certificates, etcd's data, logs, the
# kubeconfig, the webhook's serving key and policy) goes under one
# temporary directory of its own, removed when it stops, however it stops:
# the cluster's process (by its PID) is stopped first, then the directory.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-control-plane.sh
bash .ci/install-helm.sh >/dev/null
cargo build -q -p lifeguard-webhook --bin lifeguard-webhook
# The example's binary where cargo put it (CARGO_TARGET_DIR or a
# configured target-dir included); it finds lifeguard-webhook beside it.
example=$(cargo build -q -p lifeguard-e2e --example local_cluster --message-format=json-render-diagnostics |
    python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message["target"]["name"] == "local_cluster":
        print(message["executable"] or "")
')
if [ ! -x "$example" ]; then
    echo "deploy/local-cluster.sh: cargo did not say where it built the local_cluster example" >&2
    exit 2
fi

workdir=$(mktemp -d "${TMPDIR:-/tmp}/lifeguard-local-cluster.XXXXXX")
cluster=""
stop() {
    trap - EXIT INT TERM
    if [ -n "$cluster" ]; then
        kill -TERM "$cluster" 2>/dev/null || true
        wait "$cluster" 2>/dev/null || true
    fi
    # Its etcd, kube-apiserver and webhook get SIGTERM from their watchdogs
    # as it ends (SIGKILL 5 s later): until they are gone, what they still
    # write may land in the directory while it is being removed.
    for _ in $(seq 50); do
        rm -rf -- "$workdir" 2>/dev/null || true
        [ -e "$workdir" ] || break
        sleep 0.2
    done
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# In the background so that Ctrl-C reaches this script, which stops it by
# its PID; its input stays the terminal (end of input stops it too).
TMPDIR="$workdir" "$example" "$@" <&0 &
cluster=$!
wait "$cluster"

#!/usr/bin/env bash
# A real control plane on 127.0.0.1 with lifeguard installed from the chart,
# to try by hand: etcd, kube-apiserver (and, with --controllers,
# kube-controller-manager) built from their Go modules, the
# lifeguard-webhook binary run as the chart's Deployment runs it, and the
# chart's webhook configurations registered with the API server. The same
# harness the cluster tests use (tests/src/cluster/). Needs Go 1.26+ and
# python3 (for helm); the first run builds the control plane (about 7
# minutes on 2 cores), later ones take seconds. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/install-control-plane.sh
bash .ci/install-helm.sh >/dev/null
cargo build -q -p lifeguard-webhook --bin lifeguard-webhook
exec cargo run -q -p lifeguard-e2e --example local_cluster -- "$@"

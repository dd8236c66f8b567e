#!/usr/bin/env bash
# Installs prometheus-operator's PrometheusRule CRD, the kind
# `lifeguard export alerts` prints, for tests/tests/cluster_alerts.rs, into
# target/tools/prometheus-crds/:
#   monitoring.coreos.com_prometheusrules.yaml  from github.com/prometheus-operator/prometheus-operator
#                                               v0.88.0 (example/prometheus-operator-crd/)
# It comes from the Go module's zip (`go mod download -json`, from the Go
# module proxy, checked against the checksum database and against the
# module hash pinned below); nothing of it is committed. Idempotent: does
# nothing when this version's file is there.
set -euo pipefail
cd "$(dirname "$0")/.."

OPERATOR="github.com/prometheus-operator/prometheus-operator@v0.88.0"
OPERATOR_SUM="h1:3T/dCQdk7CUVRqVfwRHoC5g66fC/ML6XQQLtQVL6Q5o="

TOOLS="$(pwd)/target/tools/prometheus-crds"
STAMP="$TOOLS/.installed-${OPERATOR//\//_}"
FILE=monitoring.coreos.com_prometheusrules.yaml

if [[ -f "$STAMP" && -s "$TOOLS/$FILE" ]]; then
  echo "PrometheusRule CRD already installed: $OPERATOR ($TOOLS)"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-prometheus-crds: go is required (it fetches the CRD from its Go module)" >&2
  exit 1
fi
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# shellcheck source=.ci/go-module-dir.sh
source .ci/go-module-dir.sh

operator_dir="$(module_dir install-prometheus-crds "$OPERATOR" "$OPERATOR_SUM")"
mkdir -p "$TOOLS"
rm -f "$TOOLS"/.installed-*
install -m 0644 "$operator_dir/example/prometheus-operator-crd/$FILE" "$TOOLS/$FILE"
touch "$STAMP"
echo "installed the PrometheusRule CRD of $OPERATOR into $TOOLS"

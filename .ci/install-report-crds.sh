#!/usr/bin/env bash
# Installs the CRDs of the report objects `lifeguard audit --format
# openreports|policyreport` prints, for tests/tests/cluster_reports.rs,
# into target/tools/report-crds/:
#   openreports.io_reports.yaml        from github.com/openreports/reports-api v0.2.1 (config/crd/)
#   wgpolicyk8s.io_policyreports.yaml  from github.com/kyverno/kyverno v1.19.1 (config/crds/policyreport/),
#                                      the PolicyReport CRD as Kyverno installs it
# Each comes from its Go module's zip (`go mod download -json`, from the
# Go module proxy, checked against the checksum database and against the
# module hash pinned below); nothing of them is committed. Idempotent: does
# nothing when this version's files are there.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENREPORTS="github.com/openreports/reports-api@v0.2.1"
OPENREPORTS_SUM="h1:g9KS3yle9Y1elmww4TK9EkD1rl6inIaiIJPX6e+u680="
KYVERNO="github.com/kyverno/kyverno@v1.19.1"
KYVERNO_SUM="h1:/MkgFii3/VlQfKR1JpC9tVwNNVNQTt2S4U6qCsafsTU="

TOOLS="$(pwd)/target/tools/report-crds"
STAMP="$TOOLS/.installed-${OPENREPORTS//\//_}-${KYVERNO//\//_}"
FILES=(openreports.io_reports.yaml wgpolicyk8s.io_policyreports.yaml)

all_present() {
  local file
  for file in "${FILES[@]}"; do
    [[ -s "$TOOLS/$file" ]] || return 1
  done
}

if [[ -f "$STAMP" ]] && all_present; then
  echo "report CRDs already installed: $OPENREPORTS, $KYVERNO ($TOOLS)"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-report-crds: go is required (it fetches the CRDs from their Go modules)" >&2
  exit 1
fi
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# shellcheck source=.ci/go-module-dir.sh
source .ci/go-module-dir.sh

openreports_dir="$(module_dir install-report-crds "$OPENREPORTS" "$OPENREPORTS_SUM")"
kyverno_dir="$(module_dir install-report-crds "$KYVERNO" "$KYVERNO_SUM")"
mkdir -p "$TOOLS"
rm -f "$TOOLS"/.installed-*
install -m 0644 "$openreports_dir/config/crd/openreports.io_reports.yaml" "$TOOLS/openreports.io_reports.yaml"
install -m 0644 "$kyverno_dir/config/crds/policyreport/wgpolicyk8s.io_policyreports.yaml" \
  "$TOOLS/wgpolicyk8s.io_policyreports.yaml"
touch "$STAMP"
echo "installed the Report CRD of $OPENREPORTS and the PolicyReport CRD of $KYVERNO into $TOOLS"

#!/usr/bin/env bash
# Installs KubeRay's CRDs (RayCluster, RayJob, RayService), for the export
# tests of tests/tests/cluster_vap/ and cluster_map/ (their objects are
# typed by these schemas), into target/tools/kuberay-crds/:
#   ray.io_rayclusters.yaml, ray.io_rayjobs.yaml, ray.io_rayservices.yaml
#     from github.com/ray-project/kuberay/ray-operator v1.3.2 (config/crd/bases/),
#     the version policies/src/model/pod_kinds.rs reads the templates of
# They come from the Go module's zip (`go mod download -json`, from the Go
# module proxy, checked against the checksum database and against the
# module hash pinned below); nothing of them is committed. Idempotent: does
# nothing when this version's files are there.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBERAY="github.com/ray-project/kuberay/ray-operator@v1.3.2"
KUBERAY_SUM="h1:3tDr1WtLS8WgOg/PVvyokFFsCVuh44SsjPdtlOrHDY4="

TOOLS="$(pwd)/target/tools/kuberay-crds"
STAMP="$TOOLS/.installed-${KUBERAY//\//_}"
FILES=(ray.io_rayclusters.yaml ray.io_rayjobs.yaml ray.io_rayservices.yaml)

all_present() {
  local file
  for file in "${FILES[@]}"; do
    [[ -s "$TOOLS/$file" ]] || return 1
  done
}

if [[ -f "$STAMP" ]] && all_present; then
  echo "KubeRay CRDs already installed: $KUBERAY ($TOOLS)"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "install-kuberay-crds: go is required (it fetches the CRDs from their Go module)" >&2
  exit 1
fi
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"

# shellcheck source=.ci/go-module-dir.sh
source .ci/go-module-dir.sh
dir="$(module_dir install-kuberay-crds "$KUBERAY" "$KUBERAY_SUM")"
mkdir -p "$TOOLS"
rm -f "$TOOLS"/.installed-*
for file in "${FILES[@]}"; do
  install -m 0644 "$dir/config/crd/bases/$file" "$TOOLS/$file"
done
touch "$STAMP"
echo "installed the CRDs of $KUBERAY into $TOOLS"

#!/usr/bin/env bash
# Builds a real Kubernetes control plane for the tests that run lifeguard
# against it (tests/tests/cluster_*.rs) into target/tools/k8s/:
#   kube-apiserver, kube-controller-manager, kubectl  from k8s.io/kubernetes v1.37.2
#   etcd                                               from go.etcd.io/etcd/server/v3 v3.6.16
#   crds/cert-manager.io_*.yaml                        from github.com/cert-manager/cert-manager v1.21.2
# (cert-manager's own CRDs, so `kubectl apply --server-side -f deploy/manifests/`
# is validated against the real Certificate and Issuer schemas).
# The sources come from the Go module proxy; nothing of them is committed.
# Our two small modules under .ci/control-plane/ pin them (go.mod, go.sum).
# Idempotent: does nothing when the binaries are there with this version's
# stamp; otherwise the Go build cache makes a rebuild take seconds.
#
# k8s.io/kubernetes v1.37.2 is the newest release whose go.mod the machine's
# Go 1.26 accepts (it says `go 1.26.0`). Bump KUBE_VERSION together with the
# `require` and every `replace` in .ci/control-plane/kubernetes/go.mod.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION="v1.37.2"
ETCD_VERSION="v3.6.16"
CERT_MANAGER_VERSION="v1.21.2"

TOOLS="$(pwd)/target/tools/k8s"
STAMP="$TOOLS/.built-kubernetes-$KUBE_VERSION-etcd-$ETCD_VERSION-cert-manager-$CERT_MANAGER_VERSION"
BINARIES=(kube-apiserver kube-controller-manager kubectl etcd)
CRDS=(cert-manager.io_certificates cert-manager.io_issuers cert-manager.io_clusterissuers cert-manager.io_certificaterequests)

all_present() {
  local binary
  for binary in "${BINARIES[@]}"; do
    [[ -x "$TOOLS/$binary" ]] || return 1
  done
  local crd
  for crd in "${CRDS[@]}"; do
    [[ -f "$TOOLS/crds/$crd.yaml" ]] || return 1
  done
}

if [[ -f "$STAMP" ]] && all_present && "$TOOLS/kube-apiserver" --version >/dev/null 2>&1; then
  echo "control plane already built: $("$TOOLS/kube-apiserver" --version), etcd $ETCD_VERSION ($TOOLS)"
  exit 0
fi

source .ci/kube-build.sh
kube_build_env install-control-plane
mkdir -p "$TOOLS"
ldflags="$(kube_ldflags "$KUBE_VERSION")"

started=$SECONDS
# Write beside the target and rename, so an interrupted run never leaves half a binary.
partial="$TOOLS/.partial"
rm -rf "$partial"
mkdir -p "$partial"
(
  cd .ci/control-plane/kubernetes
  go build -trimpath -ldflags "$ldflags" -o "$partial/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl
)
(
  cd .ci/control-plane/etcd
  go build -trimpath -ldflags "-s -w" -o "$partial/etcd" .
)
for binary in "${BINARIES[@]}"; do
  mv -f "$partial/$binary" "$TOOLS/$binary"
done
rmdir "$partial"

# The module's zip carries the repository's deploy/crds/ (no build needed).
go mod download "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION"
crd_source="$(go env GOMODCACHE)/github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION/deploy/crds"
mkdir -p "$TOOLS/crds"
for crd in "${CRDS[@]}"; do
  install -m 0644 "$crd_source/$crd.yaml" "$TOOLS/crds/$crd.yaml"
done
rm -f "$TOOLS"/.built-*
touch "$STAMP"

echo "built $("$TOOLS/kube-apiserver" --version), kube-controller-manager, kubectl, etcd ($("$TOOLS/etcd" --version | head -1)) and cert-manager $CERT_MANAGER_VERSION's CRDs into $TOOLS in $((SECONDS - started)) s"

#!/usr/bin/env bash
# Builds the older API servers of the version matrix (tests/tests/cluster_versions.rs)
# into target/tools/k8s-v1.MINOR/:
#   kube-apiserver, kube-controller-manager  from k8s.io/kubernetes v1.34.4 and v1.36.3
# The newest version, v1.37.2, is .ci/install-control-plane.sh's, and so are
# etcd and kubectl, which every version shares: v1.37.2's kubectl drives
# the older servers (what it and Helm send them is stable API), and etcd
# v3.6 serves each of them.
# The sources come from the Go module proxy; nothing of them is committed.
# One small module per version under .ci/control-plane/kubernetes-v1.MINOR/
# pins it (go.mod, go.sum: the release's own dependency versions, its own
# `go` and `godebug` lines).
# v1.34 is the oldest minor the project supports; v1.36 the first whose
# MutatingAdmissionPolicy is GA. Idempotent: does nothing for a version
# whose binaries are there with its stamp; otherwise the Go build cache
# makes a rebuild take seconds.
#
# Bump a version together with the `require` and every `replace` of its
# go.mod (then `go mod tidy` in its directory).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=(v1.34.4 v1.36.3)
BINARIES=(kube-apiserver kube-controller-manager)

source .ci/kube-build.sh

# build VERSION: the binaries of VERSION into target/tools/k8s-v1.MINOR/.
build() {
  local version="$1" minor tools stamp binary ready=1
  minor="${version%.*}"
  tools="$(pwd)/target/tools/k8s-$minor"
  stamp="$tools/.built-kubernetes-$version"
  for binary in "${BINARIES[@]}"; do
    [[ -x "$tools/$binary" ]] || ready=0
  done
  if [[ -f "$stamp" && $ready == 1 ]] && "$tools/kube-apiserver" --version >/dev/null 2>&1; then
    echo "control plane $minor already built: $("$tools/kube-apiserver" --version) ($tools)"
    return
  fi
  kube_build_env install-control-plane-versions
  local started=$SECONDS partial="$tools/.partial"
  # Write beside the target and rename, so an interrupted run never leaves half a binary.
  rm -rf "$partial"
  mkdir -p "$partial"
  (
    cd ".ci/control-plane/kubernetes-$minor"
    go build -trimpath -ldflags "$(kube_ldflags "$version")" -o "$partial/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager
  )
  for binary in "${BINARIES[@]}"; do
    mv -f "$partial/$binary" "$tools/$binary"
  done
  rmdir "$partial"
  rm -f "$tools"/.built-*
  touch "$stamp"
  echo "built $("$tools/kube-apiserver" --version) and kube-controller-manager into $tools in $((SECONDS - started)) s"
}

for version in "${VERSIONS[@]}"; do
  build "$version"
done

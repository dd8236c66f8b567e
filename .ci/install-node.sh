#!/usr/bin/env bash
# Installs a real node for the tests that run pods (tests/tests/node_*.rs):
#   kubelet, kube-scheduler,  built from k8s.io/kubernetes v1.37.2 (the control
#   kube-proxy
#                             plane's module, .ci/control-plane/kubernetes) into
#                             target/tools/k8s/
#   containerd, runc,         Debian's packages, pinned below
#   the CNI plugins, iproute2
# The pods' images are not installed here: the tests build them from our own
# static binary (tests/workload) as OCI archives and import them.
# Idempotent: does nothing when the binaries carry this version's stamp and the
# packages are at their pinned versions.
#
# containerd 1.6 lacks the CRI RuntimeConfig call, so the kubelet uses its
# configured cgroup driver (cgroupfs); the kubelet's source says 1.38 drops that
# fallback, and containerd 2 (built from its Go module) will be needed then.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBE_VERSION="v1.37.2"
PACKAGES=(
  "containerd=1.6.20~ds1-1+deb12u3"
  "runc=1.1.5+ds1-1+deb12u1"
  "containernetworking-plugins=1.1.1+ds1-3+b5"
  # ip: brings up the loopback of the network namespace the node runs in.
  "iproute2=6.1.0-3"
  # kube-proxy's iptables mode, in that namespace only.
  "iptables=1.8.9-2"
)

TOOLS="$(pwd)/target/tools/k8s"
STAMP="$TOOLS/.built-node-$KUBE_VERSION"
BINARIES=(kubelet kube-scheduler kube-proxy)

packages_present() {
  local package name version
  for package in "${PACKAGES[@]}"; do
    name="${package%%=*}"
    version="${package#*=}"
    [[ "$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)" == "$version" ]] || return 1
  done
}

started=$SECONDS
if packages_present; then
  echo "node packages already installed: ${PACKAGES[*]}"
else
  apt-get update -qq
  # The package's own service is never started here (no init system runs it);
  # each test binary starts a containerd of its own with its own root and socket.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
  echo "installed ${PACKAGES[*]}"
fi

binaries_present() {
  local binary
  for binary in "${BINARIES[@]}"; do
    [[ -x "$TOOLS/$binary" ]] || return 1
  done
}

if [[ -f "$STAMP" ]] && binaries_present && "$TOOLS/kubelet" --version >/dev/null 2>&1; then
  echo "node already built: $("$TOOLS/kubelet" --version), kube-scheduler, kube-proxy ($TOOLS)"
  exit 0
fi

source .ci/kube-build.sh
kube_build_env install-node
mkdir -p "$TOOLS"
ldflags="$(kube_ldflags "$KUBE_VERSION")"

partial="$TOOLS/.partial-node"
rm -rf "$partial"
mkdir -p "$partial"
(
  cd .ci/control-plane/kubernetes
  go build -trimpath -ldflags "$ldflags" -o "$partial/" \
    k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-proxy
)
for binary in "${BINARIES[@]}"; do
  mv -f "$partial/$binary" "$TOOLS/$binary"
done
rmdir "$partial"
rm -f "$TOOLS"/.built-node-*
touch "$STAMP"

echo "built $("$TOOLS/kubelet" --version), kube-scheduler and kube-proxy into $TOOLS; node installed in $((SECONDS - started)) s"

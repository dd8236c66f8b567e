# Sourced by .ci/install-control-plane.sh and .ci/install-node.sh: how both
# build Kubernetes' binaries from the k8s.io/kubernetes module.

# kube_build_env NAME: checks for Go and sets the build's environment.
kube_build_env() {
  if ! command -v go >/dev/null 2>&1; then
    echo "$1: go (1.26 or newer) is required" >&2
    exit 1
  fi
  # Static binaries, built with the machine's own Go: the modules ask for
  # nothing newer.
  export CGO_ENABLED=0
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
}

# kube_ldflags VERSION prints the -ldflags Kubernetes' own build stamps into
# its binaries (hack/lib/version.sh): without them the API server reports
# v0.0.0-master to `kubectl version` and Helm's kubeVersion checks, and the
# kubelet the same as its node's kubeletVersion.
kube_ldflags() {
  local version="$1" minor build_date ldflags package
  minor="${version#v1.}"
  minor="${minor%%.*}"
  build_date="$(date -u +'%Y-%m-%dT%H:%M:%SZ')"
  ldflags="-s -w"
  for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $package.gitVersion=$version"
    ldflags+=" -X $package.gitMajor=1 -X $package.gitMinor=$minor"
    ldflags+=" -X $package.gitTreeState=clean -X $package.buildDate=$build_date"
  done
  printf '%s' "$ldflags"
}

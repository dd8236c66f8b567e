#!/usr/bin/env bash
# Installs the tools a platform team would pick instead of lifeguard, for the
# peer bench (tests/benches/peers/) and its short version in CI
# (tests/tests/peers.rs), into target/tools/peers/:
#   kube-score  from github.com/zegl/kube-score (cmd/kube-score)
#   kyverno     the kyverno CLI, from github.com/kyverno/kyverno (cmd/cli/kubectl-kyverno)
#   checkov/    Checkov from PyPI, in a virtualenv of its own
# The Go sources come from the Go module proxy; our two small modules under
# .ci/peers/ pin them (go.mod, go.sum), and their go.mod's `require` is the
# version built. Polaris and kube-linter are not served by the Go module
# proxy, so they are not among the peers.
# Idempotent: each tool carries a stamp of its version and is built or
# installed once; the Go build cache makes a rebuild after a bump take less.
set -euo pipefail
cd "$(dirname "$0")/.."

CHECKOV_VERSION=3.3.30

TOOLS="$(pwd)/target/tools/peers"
mkdir -p "$TOOLS"

# module_version DIR MODULE: the version of MODULE that DIR's go.mod requires
# (`go mod tidy` lists a module only a `tool` line uses among the indirect ones).
module_version() {
  sed -n "s|^[[:space:]]*\(require \)\{0,1\}$2 \(v[^ ]*\).*|\2|p" "$1/go.mod" | head -1
}

KUBE_SCORE_VERSION="$(module_version .ci/peers/kube-score github.com/zegl/kube-score)"
KYVERNO_VERSION="$(module_version .ci/peers/kyverno github.com/kyverno/kyverno)"
if [[ -z "$KUBE_SCORE_VERSION" || -z "$KYVERNO_VERSION" ]]; then
  echo "install-peers: .ci/peers/*/go.mod require no version of kube-score or kyverno" >&2
  exit 1
fi

# go_tool NAME VERSION MODULE_DIR PACKAGE LDFLAGS: builds PACKAGE in
# MODULE_DIR into $TOOLS/NAME unless this version's stamp is there.
go_tool() {
  local name="$1" version="$2" module_dir="$3" package="$4" ldflags="$5"
  local stamp="$TOOLS/.built-$name-$version"
  if [[ -f "$stamp" && -x "$TOOLS/$name" ]]; then
    echo "$name $version already built ($TOOLS/$name)"
    return
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "install-peers: go (1.26 or newer) is required to build $name" >&2
    exit 1
  fi
  local started=$SECONDS
  # Beside the target, then renamed: an interrupted build leaves no half binary.
  (cd "$module_dir" && CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" \
    go build -trimpath -ldflags "-s -w $ldflags" -o "$TOOLS/.partial-$name" "$package")
  mv -f "$TOOLS/.partial-$name" "$TOOLS/$name"
  rm -f "$TOOLS/.built-$name-"*
  touch "$stamp"
  echo "built $name $version into $TOOLS in $((SECONDS - started)) s"
}

go_tool kube-score "$KUBE_SCORE_VERSION" .ci/peers/kube-score github.com/zegl/kube-score/cmd/kube-score \
  "-X main.version=${KUBE_SCORE_VERSION#v}"
go_tool kyverno "$KYVERNO_VERSION" .ci/peers/kyverno github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno \
  "-X github.com/kyverno/kyverno/pkg/version.BuildVersion=$KYVERNO_VERSION"

CHECKOV="$TOOLS/checkov"
CHECKOV_STAMP="$CHECKOV/.checkov-$CHECKOV_VERSION"
if [[ ! -f "$CHECKOV_STAMP" || ! -x "$CHECKOV/bin/checkov" ]]; then
  PYTHON="$(command -v python3 || command -v python || true)"
  if [[ -z "$PYTHON" ]]; then
    echo "install-peers: python3 (with venv and pip) is required for Checkov" >&2
    exit 1
  fi
  started=$SECONDS
  rm -rf "$CHECKOV"
  # A virtualenv, not `pip --target`: Checkov's entry point and its many
  # dependencies need an interpreter of their own.
  "$PYTHON" -m venv "$CHECKOV"
  "$CHECKOV/bin/python" -m pip install --quiet --disable-pip-version-check "checkov==$CHECKOV_VERSION"
  touch "$CHECKOV_STAMP"
  echo "installed Checkov $CHECKOV_VERSION into $CHECKOV in $((SECONDS - started)) s"
fi

echo "kube-score $("$TOOLS/kube-score" version | sed -n 's/^kube-score version: \([^,]*\),.*/\1/p'), kyverno $("$TOOLS/kyverno" version | sed -n 's/^Version: //p'), checkov $("$CHECKOV/bin/checkov" --version) in $TOOLS"

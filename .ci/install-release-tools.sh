#!/usr/bin/env bash
# Installs what the release build (deploy/build-release.sh) and its check
# (tests/tests/release.rs) need:
#   ziglang, cargo-zigbuild  PyPI, pinned below, into target/tools/py-release:
#                            zig's C compiler and linker, which ship musl's
#                            headers and libc for every architecture, so ring's
#                            and mimalloc's C builds for aarch64-unknown-linux-musl
#                            link statically from an x86_64 machine
#   the Rust targets         aarch64-unknown-linux-musl, x86_64-unknown-linux-musl
#   musl-tools               Debian's (or Ubuntu's): musl-gcc for the native musl build
#   qemu-user                Debian's (or Ubuntu's): qemu-aarch64 runs the aarch64
#                            binary in the test, and in the release workflow's smoke check
#   krew, validate-krew-manifest  built from their Go module (sigs.k8s.io/krew,
#                            pinned below) into target/tools/krew: the test checks the
#                            release's krew manifest and installs the plugin with them
# The distribution's packages are whatever its stable release ships (security
# updates included), so they are not pinned; `dpkg -s` is checked first, so a
# second run does not touch apt. Idempotent: the PyPI tools carry a version
# stamp and are installed once.
set -euo pipefail
cd "$(dirname "$0")/.."

ZIGLANG_VERSION=0.17.0
CARGO_ZIGBUILD_VERSION=0.24.0
PY_TOOLS="target/tools/py-release"
STAMP="$PY_TOOLS/.ziglang-$ZIGLANG_VERSION-cargo-zigbuild-$CARGO_ZIGBUILD_VERSION"

PYTHON="$(command -v python3 || command -v python || true)"
if [[ -z "$PYTHON" ]]; then
  echo "install-release-tools: python3 (with pip) is required" >&2
  exit 1
fi
if [[ ! -f "$STAMP" ]]; then
  rm -rf "$PY_TOOLS"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --target "$PY_TOOLS" \
    "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
  touch "$STAMP"
fi
echo "zig $(PYTHONPATH="$PY_TOOLS" "$PYTHON" -m ziglang version) and $("$PY_TOOLS/bin/cargo-zigbuild" --version) in $PY_TOOLS"

rustup target add aarch64-unknown-linux-musl x86_64-unknown-linux-musl >/dev/null

# apt as root: directly here and in CI, through sudo on a GitHub runner.
as_root() {
  if [[ "$(id -u)" == 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-release-tools: not root and no sudo to run: $*" >&2
    return 1
  fi
}
missing=()
for package in musl-tools qemu-user; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  command -v apt-get >/dev/null 2>&1 || { echo "install-release-tools: no apt-get to install ${missing[*]}" >&2; exit 1; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "installed ${missing[*]}"
fi
qemu-aarch64 --version | head -1

# krew and its manifest validator, from the Go module proxy (checked against
# the checksum database), built outside the tree's own module.
KREW_VERSION=v0.4.3
KREW="target/tools/krew"
if [[ ! -f "$KREW/.krew-$KREW_VERSION" ]]; then
  command -v go >/dev/null 2>&1 || { echo "install-release-tools: go is required for krew" >&2; exit 1; }
  work="$(mktemp -d)"
  (cd "$work" && GOBIN="$work/bin" GOFLAGS=-mod=mod go install \
    "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "sigs.k8s.io/krew/cmd/validate-krew-manifest@$KREW_VERSION")
  rm -rf "$KREW"
  mkdir -p "$KREW"
  mv "$work/bin/krew" "$work/bin/validate-krew-manifest" "$KREW/"
  rm -rf "$work"
  touch "$KREW/.krew-$KREW_VERSION"
fi
echo "krew $KREW_VERSION in $KREW"

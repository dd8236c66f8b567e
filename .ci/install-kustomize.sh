#!/usr/bin/env bash
# Installs `kustomize` into target/tools/kustomize for the Kustomize tests
# (tests/tests/kustomize.rs, lint/tests/kustomize.rs): built from its Go
# module, sigs.k8s.io/kustomize/kustomize/v5, at the version pinned below,
# through the Go module proxy (checked against the checksum database);
# nothing of it is committed. Idempotent: does nothing when this version
# already runs.
set -euo pipefail
cd "$(dirname "$0")/.."

MODULE="sigs.k8s.io/kustomize/kustomize/v5"
VERSION="v5.8.0"

TOOLS="$(pwd)/target/tools"
BIN="$TOOLS/kustomize"
STAMP="$TOOLS/.kustomize-$VERSION"

if [[ -x "$BIN" && -f "$STAMP" ]] && "$BIN" version >/dev/null 2>&1; then
  echo "kustomize already installed: $("$BIN" version) ($BIN)"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "install-kustomize: go is required" >&2; exit 1; }
mkdir -p "$TOOLS"
# Built outside the tree's own module (the product has no Go module), into a
# scratch GOBIN, then moved in whole so an interrupted build never leaves
# half a binary.
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
(cd "$WORK" && GOBIN="$WORK/bin" GOFLAGS=-mod=mod go install "$MODULE@$VERSION")
mv "$WORK/bin/kustomize" "$BIN.partial"
mv "$BIN.partial" "$BIN"
touch "$STAMP"
echo "installed kustomize $("$BIN" version) into $TOOLS"

#!/usr/bin/env sh
# Builds the assets of a GitHub release: .github/workflows/release.yml runs
# this for every target, CI (.ci/run) for the two Linux ones, and
# tests/tests/release.rs checks what it wrote (the aarch64 binary under
# qemu-aarch64 against the x86_64 one, the checksums).
#
# Usage:
#   deploy/build-release.sh TARGET [OUTDIR]
#       builds TARGET's release binaries and writes OUTDIR/lifeguard-TARGET.tar.gz
#       with them at the archive's root, beside README.md (and LICENSE when
#       there is one). Linux musl targets: lifeguard and lifeguard-webhook,
#       static, built by deploy/build-webhook.sh (the image's build, so the
#       archives and the image carry the same binaries). macOS targets
#       (*-apple-darwin, on a Mac): lifeguard alone.
#   deploy/build-release.sh --sums [OUTDIR]
#       writes OUTDIR/SOURCE_COMMIT (the full SHA of the commit checked out,
#       one line) and OUTDIR/SHA256SUMS (`sha256sum` format, one line for
#       each lifeguard-*.tar.gz and SOURCE_COMMIT in OUTDIR).
#   deploy/build-release.sh --krew VERSION [OUTDIR]
#       writes OUTDIR/lifeguard.yaml, the krew plugin manifest of release
#       vVERSION (`kubectl krew install --manifest`, or a krew index): one
#       platform per archive SHA256SUMS lists, with its download URL under
#       https://github.com/$GITHUB_REPOSITORY (lifeguard-dev/lifeguard when
#       unset) and its checksum. krew links the archive's `lifeguard` as
#       `kubectl-lifeguard`, so `kubectl lifeguard audit` runs it.
# OUTDIR defaults to target/release-assets.
#
# The asset names are a contract: the GitHub Action (action.yml) downloads
# releases/download/vVERSION/lifeguard-TARGET.tar.gz, SHA256SUMS and
# SOURCE_COMMIT. Renaming one breaks every workflow that uses the Action.
set -eu

usage() {
  echo "usage: $0 TARGET [OUTDIR] | $0 --sums [OUTDIR] | $0 --krew VERSION [OUTDIR]" >&2
  exit 2
}
[ "$#" -ge 1 ] || usage
ACTION="$1"
if [ "$ACTION" = "--krew" ]; then
  [ "$#" -ge 2 ] && [ "$#" -le 3 ] || usage
  VERSION="${2#v}"
  shift
fi
[ "$#" -le 2 ] || usage
OUTDIR="${2:-}"
CALLER="$(pwd)"
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
# A relative OUTDIR is taken from the caller's directory.
case "$OUTDIR" in
  "") OUTDIR="$ROOT/target/release-assets" ;;
  /*) ;;
  *) OUTDIR="$CALLER/$OUTDIR" ;;
esac
mkdir -p "$OUTDIR"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

if [ "$ACTION" = "--sums" ]; then
  commit="$(git rev-parse --verify 'HEAD^{commit}')"
  printf '%s\n' "$commit" >"$OUTDIR/SOURCE_COMMIT"
  (
    cd "$OUTDIR"
    set -- lifeguard-*.tar.gz
    [ -f "$1" ] || { echo "build-release: no lifeguard-*.tar.gz in $OUTDIR" >&2; exit 1; }
    sha256 "$@" SOURCE_COMMIT | LC_ALL=C sort -k 2 >SHA256SUMS.partial
    mv -f SHA256SUMS.partial SHA256SUMS
  )
  echo "wrote $OUTDIR/SOURCE_COMMIT ($commit) and $OUTDIR/SHA256SUMS:"
  cat "$OUTDIR/SHA256SUMS"
  exit 0
fi

if [ "$ACTION" = "--krew" ]; then
  [ -f "$OUTDIR/SHA256SUMS" ] || { echo "build-release: no SHA256SUMS in $OUTDIR (run --sums first)" >&2; exit 1; }
  repo="${GITHUB_REPOSITORY:-lifeguard-dev/lifeguard}"
  manifest="$OUTDIR/lifeguard.yaml"
  {
    cat <<EOF
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: lifeguard
spec:
  version: v$VERSION
  homepage: https://github.com/$repo
  shortDescription: Find probe and shutdown anti-patterns in workloads
  description: |
    Audits the workloads of a cluster for Kubernetes probe and pod-lifecycle
    anti-patterns (one endpoint for liveness and readiness, a missing
    startup probe on a slow boot, a grace period shorter than the preStop)
    with the rules of lifeguard's linter: kubectl lifeguard audit. The same
    binary lints, fixes and simulates manifests: kubectl lifeguard lint k8s/.
  platforms:
EOF
    # One platform per archive: its Rust target says its OS and architecture.
    grep ' lifeguard-.*\.tar\.gz$' "$OUTDIR/SHA256SUMS" | while read -r sum name; do
      target="${name#lifeguard-}"
      target="${target%.tar.gz}"
      case "$target" in
        x86_64-unknown-linux-*) os=linux arch=amd64 ;;
        aarch64-unknown-linux-*) os=linux arch=arm64 ;;
        x86_64-apple-darwin) os=darwin arch=amd64 ;;
        aarch64-apple-darwin) os=darwin arch=arm64 ;;
        *) echo "build-release: no krew platform for $target" >&2; exit 1 ;;
      esac
      cat <<EOF
  - selector:
      matchLabels:
        os: $os
        arch: $arch
    uri: https://github.com/$repo/releases/download/v$VERSION/$name
    sha256: $sum
    files:
    - from: lifeguard
      to: .
    - from: LICENSE
      to: .
    bin: lifeguard
EOF
    done
  } >"$manifest.partial"
  mv -f "$manifest.partial" "$manifest"
  echo "wrote $manifest"
  exit 0
fi

TARGET="$ACTION"
case "$TARGET" in
  -*) usage ;;
  *-unknown-linux-musl)
    sh deploy/build-webhook.sh "$TARGET"
    BINARIES="lifeguard lifeguard-webhook"
    ;;
  *-apple-darwin)
    # crt-static does not apply on macOS: the binary links the system's
    # libSystem, as every macOS program must.
    rustup target add "$TARGET" >/dev/null 2>&1 || true
    RUSTFLAGS="-C strip=symbols" cargo build --release --locked --target "$TARGET" -p lifeguard --bin lifeguard
    BINARIES="lifeguard"
    ;;
  *) echo "build-release: no release build for $TARGET" >&2; exit 2 ;;
esac

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
for bin in $BINARIES; do
  cp "target/$TARGET/release/$bin" "$stage/$bin"
  chmod 0755 "$stage/$bin"
done
files="$BINARIES"
for doc in README.md LICENSE LICENSE-APACHE LICENSE-MIT; do
  if [ -f "$doc" ]; then
    cp "$doc" "$stage/$doc"
    chmod 0644 "$stage/$doc"
    files="$files $doc"
  fi
done

# GNU tar (Linux) writes the same bytes for the same files: names sorted,
# owner root, every mtime the commit's. bsdtar (macOS) has no such options;
# its archive is still correct, only not byte-reproducible.
archive="$OUTDIR/lifeguard-$TARGET.tar.gz"
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
  epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
  # shellcheck disable=SC2086 # $files: names without spaces, one word each
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - $files \
    | gzip -9n >"$archive.partial"
else
  # shellcheck disable=SC2086
  tar -C "$stage" -cf - $files | gzip -9n >"$archive.partial"
fi
mv -f "$archive.partial" "$archive"
echo "wrote $archive ($files)"

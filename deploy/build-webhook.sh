#!/usr/bin/env sh
# Builds the static lifeguard-webhook and lifeguard binaries exactly as the
# image ships them (the chart's audit CronJob runs `lifeguard audit`), and as
# the release archives carry them (deploy/build-release.sh runs this).
# deploy/Dockerfile runs this script, and so does CI (.ci/run), so the
# image's build step is exercised on every change: same target, same flags.
#
# Usage: deploy/build-webhook.sh [TARGET]
#   TARGET: a Linux musl target, x86_64-unknown-linux-musl or
#   aarch64-unknown-linux-musl; by default the machine's own architecture's
#   (the image's: the Dockerfile's build stage runs on the image's platform).
# Output: target/TARGET/release/{lifeguard-webhook,lifeguard}
set -eu
cd "$(dirname "$0")/.."

TARGET="${1:-$(uname -m)-unknown-linux-musl}"
case "$TARGET" in
  *-unknown-linux-musl) ;;
  *) echo "build-webhook: $TARGET is not a Linux musl target" >&2; exit 2 ;;
esac
rustup target add "$TARGET" >/dev/null 2>&1 || true

# ring and mimalloc compile C, which must be built against musl's headers for
# the binary to link statically. On the machine's own architecture Debian's
# musl-tools gives that (musl-gcc); for another architecture cargo-zigbuild
# gives zig's C compiler and linker, which ship musl for every architecture
# (.ci/install-release-tools.sh installs both from PyPI; Debian's
# gcc-aarch64-linux-gnu only has glibc's headers).
host_arch="$(uname -m)"
case "$TARGET" in
  "$host_arch"-*)
    cargo_build="build"
    if command -v musl-gcc >/dev/null 2>&1; then
      cc_var="CC_$(echo "$TARGET" | tr '-' '_')"
      export "$cc_var=musl-gcc"
    fi
    ;;
  *)
    cargo_build="zigbuild"
    # The pinned tools .ci/install-release-tools.sh puts under target/tools/,
    # when they are there; otherwise cargo-zigbuild and zig must be on PATH.
    tools="$(pwd)/target/tools/py-release"
    if [ -x "$tools/bin/cargo-zigbuild" ]; then
      PATH="$tools/bin:$PATH"
      PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}"
      export PATH PYTHONPATH
    fi
    if ! command -v cargo-zigbuild >/dev/null 2>&1; then
      echo "build-webhook: building for $TARGET on $host_arch needs cargo-zigbuild and zig (run .ci/install-release-tools.sh)" >&2
      exit 1
    fi
    ;;
esac

# Static, position independent, no debug info: the smallest self-contained binary.
# Two builds, not one: a build of both would unify their dependencies'
# features (the allocator's among them), so neither binary would be the one
# its own package builds.
for bin in lifeguard-webhook lifeguard; do
  RUSTFLAGS="-C target-feature=+crt-static -C strip=symbols" \
    cargo "$cargo_build" --release --locked --target "$TARGET" -p "$bin" --bin "$bin"
done

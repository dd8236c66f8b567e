#!/usr/bin/env sh
# Builds the static lifeguard-webhook and lifeguard binaries exactly as the
# image ships them (the chart's audit CronJob runs `lifeguard audit`).
# deploy/Dockerfile runs this script, and so does CI (.ci/run), so the
# image's build step is exercised on every change: same target, same flags.
# Output: target/x86_64-unknown-linux-musl/release/{lifeguard-webhook,lifeguard}
set -eu
cd "$(dirname "$0")/.."

TARGET="x86_64-unknown-linux-musl"
rustup target add "$TARGET" >/dev/null 2>&1 || true
# ring compiles C: a musl C compiler (Debian's musl-tools) makes it link statically.
if command -v musl-gcc >/dev/null 2>&1; then
  export CC_x86_64_unknown_linux_musl=musl-gcc
fi
# Static, position independent, no debug info: the smallest self-contained binary.
# Two builds, not one: a build of both would unify their dependencies'
# features (the allocator's among them), so neither binary would be the one
# its own package builds.
for bin in lifeguard-webhook lifeguard; do
  RUSTFLAGS="-C target-feature=+crt-static -C strip=symbols" \
    cargo build --release --locked --target "$TARGET" -p "$bin" --bin "$bin"
done

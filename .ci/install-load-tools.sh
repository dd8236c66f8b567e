#!/usr/bin/env bash
# Installs oha, the load generator of webhook/benches/load.rs, into
# target/tools/bin (crates.io, built here). Not part of .ci/run: the load
# bench is run by hand (BENCHMARKS.md). oha's default features use rustls,
# so the build needs no OpenSSL. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

OHA_VERSION="1.16.0"
OHA="target/tools/bin/oha"
if [[ ! -x "$OHA" ]] || [[ "$("$OHA" --version 2>/dev/null)" != "oha $OHA_VERSION" ]]; then
  cargo install oha --locked --version "$OHA_VERSION" --root target/tools
fi
"$OHA" --version

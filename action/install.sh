#!/usr/bin/env bash
# The install step of the lifeguard GitHub Action (action.yml at the
# repository root): puts the lifeguard of the action's own version on
# GITHUB_PATH. When the action's ref is a release, that is the release's
# binary (seconds); otherwise it is built from the action's checkout with
# cargo (minutes). Inputs come as environment variables:
#
#   LG_ACTION_REF  the ref the workflow names (`github.action_ref`): a tag or a commit SHA
#   LG_INSTALL     `release` (the default): the release binary when the ref is a release,
#                  else a build from source; `source`: always build from source
#   LIFEGUARD_RELEASE_BASE_URL
#                  where releases are downloaded from, for a mirror (default
#                  https://github.com/lifeguard-dev/lifeguard/releases/download);
#                  the files are looked for at BASE/vVERSION/NAME
#
# and RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, GITHUB_PATH as every runner sets them.
#
# The ref is a release when it is `vVERSION` (VERSION: lint/Cargo.toml's
# version in this checkout) or a full commit SHA equal to the release's
# SOURCE_COMMIT (a pinned SHA). The archive's SHA-256 must match its line in
# the release's SHA256SUMS: a mismatch stops the step and is never a reason
# to build instead. Anything else that keeps the release from being used (a
# branch, a SHA that is not a release, no archive for this platform, a
# download that fails) is said in one line, and lifeguard is built from source.
set -euo pipefail

action_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${LIFEGUARD_RELEASE_BASE_URL:-https://github.com/lifeguard-dev/lifeguard/releases/download}"
base="${base%/}"
root="${RUNNER_TEMP:?RUNNER_TEMP is not set}/lifeguard"
: "${GITHUB_PATH:?GITHUB_PATH is not set}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The ref. The runner leaves `github.action_ref` empty for some composite
# actions; the action's directory, _actions/OWNER/REPO/REF, still names it.
ref="${LG_ACTION_REF:-}"
if [[ -z "$ref" && "$action_root" =~ /_actions/[^/]+/[^/]+/([^/]+)$ ]]; then
  ref="${BASH_REMATCH[1]}"
fi

# lint/Cargo.toml's [package] version, or the workspace's when it inherits
# it (`version.workspace = true`).
toml_version() { # FILE SECTION
  awk -F'"' -v section="[$2]" '/^\[/ {in_section = ($0 == section)} in_section && /^version *= *"/ {print $2; exit}' "$1"
}
version="$(toml_version "$action_root/lint/Cargo.toml" package)"
[[ -n "$version" ]] || version="$(toml_version "$action_root/Cargo.toml" workspace.package)"

build_from_source() { # WHY
  echo "lifeguard: $1; building lifeguard ${version:-?} from the action's checkout with cargo (a few minutes)"
  cargo install --locked --quiet --path "$action_root/lint" --root "$root"
  echo "$root/bin" >>"$GITHUB_PATH"
  exit 0
}

# Bounded: a few retries of what may pass on a second try (timeouts, 5xx,
# 429), never of a 404, and no transfer longer than two minutes.
fetch() { # URL FILE
  curl --fail --silent --show-error --location --proto '=https,http' \
    --connect-timeout 10 --max-time 120 --retry 3 --retry-delay 2 --retry-max-time 60 \
    --output "$2" "$1" 2>"$work/curl.log"
}
fetch_or_build() { # URL FILE WHAT
  fetch "$1" "$2" || build_from_source "no $3 at $1 ($(tail -n 1 "$work/curl.log"))"
}

case "${LG_INSTALL:-release}" in
  release) ;;
  source) build_from_source "install: source" ;;
  *)
    echo "::error title=lifeguard::install must be \`release\` or \`source\`, not \`$LG_INSTALL\`"
    exit 2
    ;;
esac
[[ -n "$version" ]] || build_from_source "no version in lint/Cargo.toml"

os="${RUNNER_OS:-$(uname -s)}"
arch="${RUNNER_ARCH:-$(uname -m)}"
case "$os/$arch" in
  Linux/X64 | Linux/x86_64) target=x86_64-unknown-linux-musl ;;
  Linux/ARM64 | Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
  macOS/X64 | Darwin/x86_64) target=x86_64-apple-darwin ;;
  macOS/ARM64 | Darwin/arm64) target=aarch64-apple-darwin ;;
  *) build_from_source "no release binary for $os/$arch" ;;
esac

tag="v$version"
release="$base/$tag"
if [[ "$ref" == "$tag" ]]; then
  :
elif [[ "$ref" =~ ^[0-9a-fA-F]{40}$ ]]; then
  fetch_or_build "$release/SOURCE_COMMIT" "$work/SOURCE_COMMIT" "release $tag"
  # Lower case both: tr, since macOS's /bin/bash 3.2 has no ${x,,}.
  source_commit="$(tr -d '[:space:]' <"$work/SOURCE_COMMIT" | tr '[:upper:]' '[:lower:]')"
  if [[ "$source_commit" != "$(printf %s "$ref" | tr '[:upper:]' '[:lower:]')" ]]; then
    build_from_source "the ref $ref is not a release (release $tag was built from ${source_commit:-nothing})"
  fi
else
  build_from_source "the ref ${ref:-(none)} is not a release (a release is $tag or the full commit SHA it was built from)"
fi

asset="lifeguard-$target.tar.gz"
fetch_or_build "$release/SHA256SUMS" "$work/SHA256SUMS" "SHA256SUMS for release $tag"
expected="$(awk -v a="$asset" '$2 == a || $2 == "*" a {print tolower($1); exit}' "$work/SHA256SUMS")"
[[ -n "$expected" ]] || build_from_source "release $tag has no $asset (SHA256SUMS does not list it)"
fetch_or_build "$release/$asset" "$work/$asset" "$asset"

if command -v sha256sum >/dev/null 2>&1; then
  actual="$(sha256sum "$work/$asset")"
else
  actual="$(shasum -a 256 "$work/$asset")" # macOS
fi
actual="${actual%% *}"
if [[ ! "$expected" =~ ^[0-9a-f]{64}$ || "$actual" != "$expected" ]]; then
  echo "::error title=lifeguard::$asset of release $tag ($release/$asset) does not match its SHA256SUMS line: expected sha256 $expected, got $actual. Not installing it; a checksum mismatch is never a reason to build instead (a corrupted download or a changed file: run again, or look at the release)."
  exit 1
fi

mkdir -p "$work/unpacked"
tar -xzf "$work/$asset" -C "$work/unpacked"
if [[ ! -f "$work/unpacked/lifeguard" ]]; then
  echo "::error title=lifeguard::$asset of release $tag has no \`lifeguard\` at its root"
  exit 1
fi
rm -rf "$root/bin"
mkdir -p "$root/bin"
for binary in lifeguard lifeguard-webhook; do
  if [[ -f "$work/unpacked/$binary" ]]; then
    install -m 0755 "$work/unpacked/$binary" "$root/bin/$binary"
  fi
done
if ! installed="$("$root/bin/lifeguard" --version 2>&1)"; then
  echo "::error title=lifeguard::lifeguard from $asset of release $tag does not run on this runner: $installed"
  exit 1
fi
echo "lifeguard: installed $installed from $asset of release $tag (sha256 $actual)"
echo "$root/bin" >>"$GITHUB_PATH"

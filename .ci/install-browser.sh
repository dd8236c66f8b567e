#!/usr/bin/env bash
# Installs Debian's `chromium` for tests/tests/html_report.rs, which opens
# `--format html` reports in it headless (file:// only, no network). Debian
# ships only the current security release of chromium, so the package is not
# pinned to a version: the test needs only a headless Chromium new enough for
# `--headless` (the new headless mode, 112 and later), checked below.
# Idempotent: does nothing when the package is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

MIN_MAJOR=112

if ! dpkg -s chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "install-browser: no chromium and no apt-get to install it" >&2
    exit 1
  fi
fi
version="$(dpkg-query -W -f='${Version}' chromium)"
major="${version%%.*}"
if (( major < MIN_MAJOR )); then
  echo "install-browser: chromium $version is older than $MIN_MAJOR" >&2
  exit 1
fi
echo "chromium $version ($(command -v chromium))"

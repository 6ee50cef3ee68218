#!/usr/bin/env bash
# The last minutes of a device lease: Nsight Compute's bank conflicts for every kernel with shared
# accesses (slow_compare.py --rerun), and the MCP profile tool against `tilescope profile --json`
# beside it, in one short call. Results under $OUT.
set -u
t0=$SECONDS
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && tar xJf .carry/extra.tar.xz -C /tmp/site
OUT=${OUT:-/tmp/h200-lean}
mkdir -p "$OUT"
python3 benchmarks/gpu/install_shim.py /tmp/ts > /dev/null 2>&1
export PYTHONPATH=/tmp/ts:/tmp/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
export TILELANG_CACHE_DIR=/tmp/tlcache
timeout 60 python3 -m tilescope check examples/gemm.py 2>&1 | tail -2
echo "probe done at $((SECONDS - t0)) s"
timeout 150 python3 benchmarks/gpu/mcp_profile.py "$OUT/b-mcp-profile.json" examples/gemm.py > "$OUT/b-mcp.txt" 2>&1 &
BUDGET=${BUDGET:-140}
timeout $((BUDGET + 30)) python3 benchmarks/gpu/slow_compare.py --out "$OUT" --rerun --budget-s "$BUDGET" -j 12 \
  > "$OUT/a-slow-log.txt" 2>&1
wait
echo "done at $((SECONDS - t0)) s"
tail -40 "$OUT/a-slow-log.txt"; tail -5 "$OUT/b-mcp.txt" | cut -c1-400

#!/usr/bin/env bash
# H200 call B (under 9.5 minutes): the fixture kernel libraries recorded on the GPU and compared
# with what the CPU's fake-device run learnt (committed under benchmarks/results/), `check` of the
# recorded library rebuilding each instance against plain TileLang, the warm CLI puzzle check
# (median of 10), and the MCP `profile` tool against `tilescope profile --json`. Results under $OUT.
set -u
t0=$SECONDS
BASE=${BASE:-/tmp}  # the folder holding the unpacked site and the install shim (h200_all.sh picks it)
[ -d $BASE/site/tilelang ] || { mkdir -p $BASE/site && tar xJf .carry/site.tar.xz -C $BASE/site \
  && tar xJf .carry/extra.tar.xz -C $BASE/site; }
OUT=${OUT:-/tmp/h200-b}
mkdir -p "$OUT"
LOG="$OUT/b-log.txt"
python3 benchmarks/gpu/install_shim.py $BASE/tsb > "$LOG" 2>&1 || true
export PYTHONPATH=$BASE/tsb:$BASE/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
export TILELANG_CACHE_DIR=/tmp/tlcache TILESCOPE_DATA_DIR=/tmp/tilescope-data
REPO=$PWD
{ date -u; nvidia-smi --query-gpu=name --format=csv,noheader; python3 -m tilescope --version
  python3 -c "from tilescope.core.sandbox import landlock; print('landlock ABI', landlock.abi())"; } >> "$LOG" 2>&1

# 1. The kernel library (python -m mylib.bench): recorded with the GPU, checked with the GPU hidden.
KL=/tmp/kernel_lib && rm -rf $KL && cp -r tests/core/fixtures/kernel_lib $KL
{ echo "== kernel_lib: record on the H200"
  cd $KL && PYTHONPATH=src:$PYTHONPATH timeout 150 python3 -m tilescope record -- python3 -m mylib.bench; cd "$REPO"
  echo "== kernel_lib: the CPU's fake-device run against the H200's"
  python3 benchmarks/gpu/instances_vs_plain.py --same-instances \
    benchmarks/results/fake-device-kernel_lib-cpu-instances.json $KL/.tilescope/instances.json "$OUT/b-klib-same.json"
  echo "== kernel_lib: check with the GPU hidden, against plain TileLang"
  CUDA_VISIBLE_DEVICES="" timeout 150 python3 -m tilescope check --json $KL/src/mylib > /tmp/klib-check.json
  python3 benchmarks/gpu/instances_vs_plain.py $KL /tmp/klib-check.json "$OUT/b-klib-plain.json"
  cp $KL/.tilescope/instances.json "$OUT/b-klib-instances.json"
} >> "$LOG" 2>&1
echo "kernel_lib done at $((SECONDS - t0)) s" >> "$LOG"

# 2. The pytest-taught library: its tests recorded on the H200, against the CPU's fake-device run.
GL=/tmp/gpulib && rm -rf $GL && cp -r tests/core/fixtures/fake_device/gpulib $GL
{ echo "== gpulib: record -- pytest on the H200"
  cd $GL && timeout 150 python3 -m tilescope record -- python3 -m pytest -q -p no:cacheprovider; cd "$REPO"
  python3 benchmarks/gpu/instances_vs_plain.py --same-instances \
    benchmarks/results/fake-device-gpulib-cpu-instances.json $GL/.tilescope/instances.json "$OUT/b-gpulib-same.json"
} >> "$LOG" 2>&1
echo "gpulib done at $((SECONDS - t0)) s" >> "$LOG"

# 3. The warm CLI puzzle check, median of 10 (the service's start not counted).
timeout 200 python3 benchmarks/gpu/puzzle_check_warm.py "$OUT/b-puzzle-warm.json" --puzzle 07 --runs 10 >> "$LOG" 2>&1
python3 -c "from tilescope.puzzles import service; service.stop()" >> "$LOG" 2>&1
echo "puzzle check done at $((SECONDS - t0)) s" >> "$LOG"

# 4. The MCP profile tool against the CLI's.
timeout 150 python3 benchmarks/gpu/mcp_profile.py "$OUT/b-mcp-profile.json" examples/gemm.py examples/softmax.py >> "$LOG" 2>&1
echo "done at $((SECONDS - t0)) s" >> "$LOG"
[ -n "${QUIET:-}" ] || cut -c1-300 "$LOG" | tail -80

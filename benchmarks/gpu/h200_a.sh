#!/usr/bin/env bash
# H200 call A (under 9.5 minutes): Nsight Compute's bank conflicts for every kernel with shared accesses
# (the earlier set and the kernels written with thread indices) while compute-sanitizer (memcheck,
# racecheck, initcheck, synccheck) runs every hazard fixture beside it. Results under $OUT (6 files).
set -u
t0=$SECONDS
BASE=${BASE:-/tmp}  # the folder holding the unpacked site and the install shim (h200_all.sh picks it)
[ -d $BASE/site/tilelang ] || { mkdir -p $BASE/site && tar xJf .carry/site.tar.xz -C $BASE/site \
  && tar xJf .carry/extra.tar.xz -C $BASE/site; }
BUDGET=${BUDGET:-440}  # seconds each of the two steps may start work in (h200_all.sh gives less)
OUT=${OUT:-/tmp/h200-a}
mkdir -p "$OUT"
python3 benchmarks/gpu/install_shim.py $BASE/ts > "$OUT/a-env.txt" 2>&1 || true
export PYTHONPATH=$BASE/ts:$BASE/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
export TILELANG_CACHE_DIR=/tmp/tlcache
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1
  compute-sanitizer --version | tail -1; nproc
  python3 -c "import torch, tilelang; print('torch', torch.__version__, 'tilelang', tilelang.__version__)"
  python3 -m tilescope --version; echo "setup took $((SECONDS - t0)) s"
} >> "$OUT/a-env.txt" 2>&1
[ -n "${SKIP_SANITIZER:-}" ] || ( PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout $((BUDGET + 30)) \
    python3 benchmarks/hazards/sanitize.py --out "$OUT/a-sanitizer.json" --budget "$BUDGET" --jobs 8 \
    > "$OUT/a-sanitizer-run.txt" 2>&1 ) &
timeout $((BUDGET + 40)) python3 benchmarks/gpu/slow_compare.py --out "$OUT" --rerun --budget-s "$BUDGET" -j 8 > "$OUT/a-slow-log.txt" 2>&1
wait
echo "done at $((SECONDS - t0)) s" >> "$OUT/a-env.txt"
[ -n "${QUIET:-}" ] || { tail -30 "$OUT/a-slow-log.txt"; tail -50 "$OUT/a-sanitizer-run.txt"; }

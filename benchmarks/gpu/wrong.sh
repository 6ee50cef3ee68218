#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over every hazard fixture on the GPU,
# for the side-by-side with Tilescope's CPU-only hazard check (benchmarks/bench_hazards.py).
# Writes $OUT/wrong-sanitizer.json (per fixture: plain run, each tool's count and first report).
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
export TILELANG_CACHE_DIR=/tmp/tlcache
OUT=${OUT:-/tmp/wrong-out}
mkdir -p "$OUT"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  (compute-sanitizer --version || /usr/local/cuda/bin/compute-sanitizer --version) 2>&1 | tail -1 || true
  python3 -c "import tilelang, torch; print('tilelang', tilelang.__version__, 'torch', torch.__version__)" || true
} > "$OUT/wrong-env.txt" 2>&1
timeout 440 python3 benchmarks/hazards/sanitize.py --out "$OUT/wrong-sanitizer.json" --budget 400 --jobs 12 \
  > "$OUT/wrong-run.txt" 2>&1 || echo "sanitize.py exited $?" >> "$OUT/wrong-run.txt"
tail -40 "$OUT/wrong-run.txt"

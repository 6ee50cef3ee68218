#!/usr/bin/env bash
# A short second H200 run (under 8 minutes): Nsight Compute's bank conflicts and occupancy for the
# kernels with shared accesses, and the GPU tests of `tilescope profile`. Writes slow-*.{md,json,txt}.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/slow-out}
mkdir -p "$OUT"
python3 benchmarks/gpu/install_shim.py /tmp/ts > "$OUT/slow-env.txt" 2>&1 || true
export PYTHONPATH=/tmp/ts:/tmp/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
python3 -m tilescope --version >> "$OUT/slow-env.txt" 2>&1 || true
ncu --query-metrics --chip gh100 2>&1 | grep -iE "shared|sass_inst_executed_op" >> "$OUT/slow-env.txt" || true
timeout 330 python3 benchmarks/gpu/slow_compare.py --out "$OUT" --rerun --budget-s 300 -j 16 2>&1 | tee "$OUT/slow-log.txt" || true
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/core/test_profile_gpu.py 2>&1 | tee "$OUT/slow-pytest.txt" || true
ls -la "$OUT"

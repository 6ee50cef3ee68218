#!/usr/bin/env bash
# On the H200: static speed figures against the GPU's own (bank conflicts and occupancy against Nsight
# Compute and CUDA's occupancy calculator, `tilescope profile`'s time against the puzzles' grader), then
# the GPU tests of `tilescope profile`. Writes slow-*.{md,json,txt} under $OUT; about 6 minutes.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/slow-out}
mkdir -p "$OUT"
python3 benchmarks/gpu/install_shim.py /tmp/ts > "$OUT/slow-env.txt" 2>&1 || true
export PYTHONPATH=/tmp/ts:/tmp/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
{
  date -u; nvidia-smi; ncu --version; which nvcc ptxas
  python3 -c "import torch, tilelang, tilescope.core.cli.profile_cmd as p; print(torch.__version__, tilelang.__version__, p.__file__)"
  python3 -m tilescope --version
} >> "$OUT/slow-env.txt" 2>&1 || true
timeout 320 python3 benchmarks/gpu/slow_compare.py --out "$OUT" --budget-s 270 -j 14 2>&1 | tee "$OUT/slow-log.txt" || true
timeout 40 python3 -m pytest -q -p no:cacheprovider tests/core/test_profile_gpu.py 2>&1 | tee "$OUT/slow-pytest.txt" || true
timeout 30 python3 -m tilescope profile examples/softmax.py > "$OUT/slow-profile-softmax.txt" 2>&1 || true
ls -la "$OUT"

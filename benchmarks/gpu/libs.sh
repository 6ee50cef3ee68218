#!/usr/bin/env bash
# The kernel-library fixture (tests/core/fixtures/kernel_lib) on an H200, in one go (at most 7 minutes):
#  1. `tilescope record -- python -m mylib.bench` with the GPU: every kernel compiled for real, the
#     instances (and the device the run had) kept;
#  2. `tilescope check` of the recorded library with the GPU hidden: every instance rebuilt, the
#     persistent kernel's device queries answered from the recorded H200;
#  3. the float8 GEMM with a float16 accumulator and the copy between regions of different extents
#     (static errors once) compiled and run on the H200 against torch;
#  4. benchmarks/bench_device_compile.py on a quiet machine (what nvcc adds to check per kernel).
# Results (at most 8 files) under $OUT.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/libs-out}
mkdir -p "$OUT"
# The tree as the package `tilescope` (tilescope.core = tilelang_core, ...), as an installed one maps it.
rm -rf /tmp/ts && mkdir -p /tmp/ts/tilescope && cp tilescope/*.py /tmp/ts/tilescope/
for pair in core:tilelang_core lsp:lsp visualizer:visualizer puzzles:puzzles; do
  ln -s "$PWD/${pair#*:}" "/tmp/ts/tilescope/${pair%%:*}"
done
export PYTHONPATH=/tmp/site:/tmp/ts:$PWD
export TILELANG_CACHE_DIR=/tmp/tlcache
REPO=$PWD
LOG="$OUT/libs-run.txt"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  python3 -c "import tilelang, torch; print('tilelang', tilelang.__version__, 'torch', torch.__version__)" || true
  nproc; uptime
} > "$LOG" 2>&1

# 1. record with the GPU.
WS=/tmp/libs-ws
rm -rf "$WS" && cp -r tests/core/fixtures/kernel_lib "$WS"
{
  echo "== record"
  cd "$WS" && PYTHONPATH=src:$PYTHONPATH timeout 120 python3 -m tilescope record -- python3 -m mylib.bench || echo "record exited $?"
  cd "$REPO"
} >> "$LOG" 2>&1
cp "$WS/.tilescope/instances.json" "$OUT/libs-instances.json" 2>>"$LOG" || true

# 2. check with the GPU hidden: the recorded device answers the build-time queries.
CUDA_VISIBLE_DEVICES="" timeout 100 python3 -m tilescope check --json "$WS/src/mylib" \
  > "$OUT/libs-check.json" 2>>"$LOG" || echo "check exited $?" >> "$LOG"
python3 - "$OUT/libs-check.json" >> "$LOG" 2>&1 <<'PY' || true
import json, sys
data = json.load(open(sys.argv[1]))
for f in data["files"]:
    for k in f["kernels"]:
        notes = [d["code"] + ": " + d["message"][:160] for d in k["diagnostics"]]
        grid = (k.get("launch") or {}).get("grid")
        print(f["path"].split("src/")[-1], k["kernel"], "lowered" if k["passes"] else "NOT lowered", grid, k["arg_sources"], notes)
    for d in f["diagnostics"]:
        print(f["path"].split("src/")[-1], "file:", d["code"], d["message"][:160])
PY

# 3. the once-false static errors, built and run on the H200.
timeout 60 python3 - > "$OUT/libs-run-rules.txt" 2>&1 <<'PY' || echo "rules exited $?" >> "$OUT/libs-run-rules.txt"
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("static_rules", "tests/core/fixtures/static_rules.py")
rules = importlib.util.module_from_spec(spec); spec.loader.exec_module(rules)
a = torch.randn(256, 256, device="cuda").to(torch.float8_e4m3fn)
b = torch.randn(256, 256, device="cuda").to(torch.float8_e4m3fn)
ref = (a.half() @ b.half().T).float()
for name in ("fp8_gemm",):
    try:
        c = getattr(rules, name)()(a, b).float()
        print(name, "ran; max |diff| vs torch", float((c - ref).abs().max()), "max |ref|", float(ref.abs().max()))
    except Exception as err:
        print(name, "FAILED:", type(err).__name__, str(err)[:500])
try:
    x = torch.randn(64, 8, device="cuda")
    y = rules.slices()(x)
    print("slices ran; B[:, :2] == A[:, :2]:", bool(torch.equal(y[:, :2], x[:, :2])), "B[:, 2]:", y[:4, 2].tolist())
except Exception as err:
    print("slices FAILED:", type(err).__name__, str(err)[:500])
PY

# 4. the device-compile figure.
timeout 120 python3 benchmarks/bench_device_compile.py --rounds 2 > "$OUT/libs-device-compile.txt" 2>&1 \
  || echo "bench exited $?" >> "$OUT/libs-device-compile.txt"
date -u >> "$LOG"

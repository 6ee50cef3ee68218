#!/usr/bin/env bash
# The sealed grader on an H200, in one go (at most 6 minutes: each step has its own limit, 330 s in all):
#  1. every reference graded at ★★★ on every case (fixed, hidden, timed) and the table of reference vs
#     torch in the same run (benchmarks/bench_puzzles.py --wrong no): 16 against SDPA with its default
#     backend, 17 against dequantising then torch.matmul, 12 against its best unpipelined kernel;
#  2. the held-out hostile files on the GPU path through the CLI and the warm service: a factory that
#     rewrites the reference with a kernel that writes nothing, one that reads the reference and the
#     progress store, one that reads the grader's memory; the content checked against its manifest
#     after; first a correct file through a cold service with --timeout 8 (the service's start not counted);
#  3. in the time left, the deliberately wrong solutions (bench_puzzles.py --wrong only).
# Results (7 files) under $OUT.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/seal-out}
mkdir -p "$OUT"
LOG="$OUT/seal-run.txt"
# The checkout as the installed `tilescope` (package links and a dist-info with the entry points).
python3 benchmarks/gpu/install_shim.py /tmp/ts > "$LOG" 2>&1 || true
export PYTHONPATH=/tmp/site:/tmp/ts:$PWD
export TILELANG_CACHE_DIR=/tmp/tlcache
export TILESCOPE_DATA_DIR=/tmp/seal-data
{
  date -u
  uname -r
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  python3 -c "import tilelang, torch; print('tilelang', tilelang.__version__, 'torch', torch.__version__)" || true
  python3 -c "from tilescope.core.sandbox import landlock; print('landlock ABI', landlock.abi())" || true
  python3 -m tilescope.puzzles.manifest --check || true
} >> "$LOG" 2>&1

# 1. references and the table.
timeout 240 python3 benchmarks/bench_puzzles.py --jobs 16 --wrong no --out "$OUT/seal-puzzles.json" \
  > "$OUT/seal-bench.txt" 2>&1 || echo "bench_puzzles exited $?" >> "$OUT/seal-bench.txt"
python3 benchmarks/bench_puzzles.py --render "$OUT/seal-puzzles.json" > "$OUT/seal-table.md" 2>&1 || true

# 2. hostile files on the GPU path, then the content against the manifest.
hostile() {  # NAME FILE EXTRA...: one check's JSON report as a line of the hostile log
  local name=$1 file=$2
  shift 2
  local start=$(date +%s.%N)
  local report
  report=$(timeout 45 python3 -m tilescope puzzles check 1 "$file" --json "$@" 2>>"$LOG")
  local code=$?
  python3 - "$name" "$code" "$start" "$report" <<'EOF' >> "$OUT/seal-hostile.jsonl" 2>>"$LOG"
import json, sys, time
name, code, start, text = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
try:
    r = json.loads(text)
    row = {k: r.get(k) for k in ("passed", "failure", "summary", "device", "not_checked")}
except ValueError:
    row = {"raw": text[-1500:]}
print(json.dumps({"check": name, "exit": code, "seconds": round(time.time() - start, 1), **row}))
EOF
}
{
  echo "== hostile files, GPU path"
  python3 -c "from tilescope.puzzles import service; service.stop()" || true
  hostile cold-service-solution-timeout-8 puzzles/content/01_copy_one_block/solution.py --service --timeout 8
  hostile rewrites-reference tests/puzzles/fixtures/rewrites_reference.py --service
  hostile reads-reference tests/puzzles/fixtures/reads_reference.py --service
  hostile reads-hidden-seed tests/puzzles/fixtures/reads_hidden_seed.py --service
  hostile solution-after puzzles/content/01_copy_one_block/solution.py --service
  python3 -c "from tilescope.puzzles import service; service.stop()" || true
  echo "== the content against its manifest after"
  python3 -m tilescope.puzzles.manifest --check
} >> "$LOG" 2>&1

# 3. the wrong solutions, in what is left of 330 s (the kernel cache is warm from step 1).
left=$((330 - SECONDS))
if [ "$left" -gt 20 ]; then
  timeout "$left" python3 benchmarks/bench_puzzles.py --jobs 0 --wrong only > "$OUT/seal-wrong.txt" 2>&1 \
    || echo "wrong solutions: exited $? (limit ${left} s)" >> "$OUT/seal-wrong.txt"
else
  echo "wrong solutions: not run (${left} s left)" > "$OUT/seal-wrong.txt"
fi

echo "== table"; cat "$OUT/seal-table.md"
echo "== hostile"; cut -c1-400 "$OUT/seal-hostile.jsonl"
echo "== wrong"; grep -c "^   wrong" "$OUT/seal-wrong.txt"; tail -3 "$OUT/seal-wrong.txt"
echo "== log tail"; tail -12 "$LOG"

#!/usr/bin/env bash
# The sealed grader on an H200, in one go (about 7 minutes):
#  1. every reference graded at its timed shape and every case (fixed, hidden, timed), every wrong
#     solution, and the table of reference vs torch in the same run (benchmarks/bench_puzzles.py);
#  2. the held-out hostile files on the GPU path through the CLI and the warm service: a factory that
#     rewrites the reference with a kernel that writes nothing, one that reads the reference and the
#     progress store, one that reads the grader's memory; the content checked against its manifest
#     after; a correct file through a cold service with --timeout 8 (the service's start not counted);
#  3. candidate variants of 17's reference against its new torch comparison (tune_references.py).
# Results (at most 8 files) under $OUT.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/seal-out}
mkdir -p "$OUT"
# The tree as the package `tilescope` (tilescope.core = tilelang_core, ...), as an installed one maps it.
rm -rf /tmp/ts && mkdir -p /tmp/ts/tilescope && cp tilescope/*.py /tmp/ts/tilescope/
for pair in core:tilelang_core lsp:lsp visualizer:visualizer puzzles:puzzles; do
  ln -s "$PWD/${pair#*:}" "/tmp/ts/tilescope/${pair%%:*}"
done
export PYTHONPATH=/tmp/site:/tmp/ts:$PWD
export TILELANG_CACHE_DIR=/tmp/tlcache
export TILESCOPE_DATA_DIR=/tmp/seal-data
LOG="$OUT/seal-run.txt"
{
  date -u
  uname -r
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  python3 -c "import tilelang, torch; print('tilelang', tilelang.__version__, 'torch', torch.__version__)" || true
  python3 -c "from tilescope.core import landlock; print('landlock ABI', landlock.abi())" || true
  python3 -m tilescope.puzzles.manifest --check || true
} > "$LOG" 2>&1

# 1. references, wrong solutions, the table (the report JSON, and its rendered table).
timeout 330 python3 benchmarks/bench_puzzles.py --jobs 16 --out "$OUT/seal-puzzles.json" \
  > "$OUT/seal-bench.txt" 2>&1 || echo "bench_puzzles exited $?" >> "$OUT/seal-bench.txt"
python3 benchmarks/bench_puzzles.py --render "$OUT/seal-puzzles.json" > "$OUT/seal-table.md" 2>&1 || true

# 2. hostile files on the GPU path, then the content against the manifest.
hostile() {  # NAME FILE EXTRA...: one check's JSON report as a line of the hostile log
  local name=$1 file=$2
  shift 2
  local start=$(date +%s.%N)
  local report
  report=$(timeout 200 python3 -m tilescope puzzles check 1 "$file" --json "$@" 2>>"$LOG")
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
  tail -1 "$OUT/seal-hostile.jsonl"
}
{
  echo "== hostile files, GPU path"
  python3 -c "from tilescope.puzzles import service; service.stop()" 2>/dev/null || true
  hostile cold-service-solution-timeout-8 puzzles/content/01_copy_one_block/solution.py --service --timeout 8
  hostile rewrites-reference tests/puzzles/fixtures/rewrites_reference.py --service
  hostile reads-reference tests/puzzles/fixtures/reads_reference.py --service
  hostile reads-hidden-seed tests/puzzles/fixtures/reads_hidden_seed.py --service
  hostile solution-after puzzles/content/01_copy_one_block/solution.py --service
  python3 -c "from tilescope.puzzles import service; service.stop()" 2>/dev/null || true
  echo "== the content against its manifest after"
  python3 -m tilescope.puzzles.manifest --check
  git status --short puzzles/content 2>/dev/null | head
} >> "$LOG" 2>&1

# 3. variants of 17's reference (and 16's, as it stands) against the torch a user calls.
timeout 100 python3 benchmarks/tune_references.py --out "$OUT/seal-tune.jsonl" --only 16,17,12 --budget 85 \
  --files solution,best_unpipelined.py > "$OUT/seal-tune.txt" 2>&1 || echo "tune exited $?" >> "$OUT/seal-tune.txt"

echo "== table"; cat "$OUT/seal-table.md"
echo "== hostile"; cat "$OUT/seal-hostile.jsonl"
echo "== tune"; grep -v '"note"' "$OUT/seal-tune.jsonl" | cut -c1-300
echo "== log tail"; tail -20 "$LOG"

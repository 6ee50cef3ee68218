#!/usr/bin/env bash
# On the H200 (at most 7.5 minutes): a grading server with one GPU node (Ray) grades 20 submissions and each
# verdict is compared to `tilescope puzzles check` on the same file. Writes server-*.{json,txt,html}.
mkdir -p /tmp/site && tar xJf .carry/site.tar.xz -C /tmp/site && export PYTHONPATH=/tmp/site:$PWD;
OUT=${OUT:-/tmp/server-out}
mkdir -p "$OUT"
python3 benchmarks/gpu/install_shim.py /tmp/ts > "$OUT/server-env.txt" 2>&1 || true
export PYTHONPATH=/tmp/ts:/tmp/site:$PWD TILESCOPE_CACHE=/tmp/tilescope-cache PYTHONUNBUFFERED=1
export TILESCOPE_DATA_DIR=/tmp/tilescope-data
{
  python3 -m tilescope --version
  nvidia-smi -L
  python3 -c 'import ray, sqlalchemy, alembic, uvicorn, starlette, jinja2; print("ray", ray.__version__, "sqlalchemy", sqlalchemy.__version__, "alembic", alembic.__version__, "uvicorn", uvicorn.__version__, "starlette", starlette.__version__, "jinja2", jinja2.__version__)'
} >> "$OUT/server-env.txt" 2>&1 || true
timeout 450 python3 benchmarks/gpu/server_compare.py --out "$OUT" 2>&1 | tee "$OUT/server-log.txt" || true
ls -la "$OUT"

"""On a GPU machine: a grading server with one GPU node grades 20 files, each verdict compared to ``puzzles check``.

Starts a one-node Ray cluster with the GPU (``ray start --head --num-gpus 1`` on loopback; a local
cluster started by the server itself if that fails), the server on it (``puzzles serve --ray``, SQLite),
queues 20 files (references, wrong files, two forgeries: a forged report and a factory that rewrites
its reference) over the API and one more through ``puzzles submit``, waits for the verdicts, stops the
server and the cluster, then checks each file with ``tilescope puzzles check N FILE --json`` on the
same machine and compares pass, failure kind and device. Writes ``server-results.json`` (every pair of
reports' key fields and times), ``server-summary.txt`` and the page's HTML as the learner saw it.

    python3 benchmarks/gpu/server_compare.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "puzzles" / "content"
FILES = [
    ("01", "01_copy_one_block/solution.py"),
    ("01", "01_copy_one_block/wrong/unmasked.py"),
    ("01", "01_copy_one_block/wrong/forged_report.py"),
    ("01", "../../tests/puzzles/fixtures/rewrites_reference.py"),
    ("01", "01_copy_one_block/wrong/segfault_at_import.py"),
    ("02", "02_copy_ragged/solution.py"),
    ("02", "02_copy_ragged/wrong/capped_grid.py"),
    ("02", "02_copy_ragged/wrong/double_length.py"),
    ("03", "03_vector_add/solution.py"),
    ("03", "03_vector_add/wrong/noop_at_timed_shape.py"),
    ("03", "03_vector_add/wrong/half_precision.py"),
    ("04", "04_outer_add/solution.py"),
    ("05", "05_silu_fwd_bwd/solution.py"),
    ("06", "06_row_sum/solution.py"),
    ("06", "06_row_sum/wrong/hardcoded_trip_count.py"),
    ("07", "07_softmax/solution.py"),
    ("07", "07_softmax/wrong/no_max_shift.py"),
    ("09", "09_rms_norm/solution.py"),
    ("12", "12_gemm_tiled/solution.py"),
    ("12", "12_gemm_tiled/wrong/b_tile_shape.py"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def api(url: str, token: str, body: dict[str, Any] | None = None, cookie: bool = False) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    headers.update({"Cookie": f"tilescope_token={token}"} if cookie else {"Authorization": f"Bearer {token}"})
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=60) as answer:
            raw = answer.read()
            return answer.status, raw.decode() if cookie else json.loads(raw)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except (urllib.error.URLError, OSError) as err:
        return 0, str(err)


def tilescope(*args: str, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def key(report: dict[str, Any] | None) -> dict[str, Any]:
    if not report:
        return {"passed": None, "failure": None, "device": None}
    perf = report.get("perf") or {}
    return {
        "passed": report.get("passed"),
        "failure": report.get("failure"),
        "device": report.get("device"),
        "summary": str(report.get("summary", ""))[:300],
        "time_us": perf.get("time_us"),
        "torch_us": perf.get("torch_us"),
        "stars": perf.get("stars"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--grade-budget-s", type=float, default=230.0)
    parser.add_argument("--check-timeout-s", type=float, default=90.0)
    parser.add_argument("--deadline-s", type=float, default=420.0, help="no check starts after this")
    parser.add_argument("--files", type=int, default=len(FILES), help="the first N files only (a dry run)")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="tilescope-gpu-server-"))
    db = f"sqlite:///{folder / 'class.db'}"
    said: list[str] = []

    def note(line: str) -> None:
        said.append(line)
        print(line, flush=True)

    ray_port = free_port()
    head = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block", "--port", str(ray_port)]
    head += ["--num-gpus", "1", "--num-cpus", "8", "--include-dashboard=false"]
    ray_log = open(out / "server-ray-start.txt", "w")  # noqa: SIM115  (the head's output, until it is stopped)
    # Token authentication, as a class's cluster should run: the head and the server read ~/.ray/auth_token,
    # which `ray start` does not create (the token itself is never written to the results).
    os.environ["RAY_AUTH_MODE"] = "token"
    made_token = subprocess.run(
        [sys.executable, "-m", "ray.scripts.scripts", "get-auth-token", "--generate"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    note(f"ray get-auth-token --generate: rc {made_token.returncode} {made_token.stderr.strip()[-200:]}")
    ray_head = subprocess.Popen([*head, "--disable-usage-stats"], stdout=ray_log, stderr=subprocess.STDOUT)
    address = None
    deadline = time.perf_counter() + 90
    while address is None and ray_head.poll() is None and time.perf_counter() < deadline:
        # The address the head gives for joining it: this machine's own IP (Ray turns loopback into it).
        found = re.search(r"ray start --address='([^']+)'", (out / "server-ray-start.txt").read_text())
        address = found.group(1) if found else None
        time.sleep(0.5)
    where = address or "a local cluster of the server's"
    note(f"ray start --head --num-gpus 1 (the GPU node): {'up' if address else 'failed'}; grading on {where}")

    made = tilescope("puzzles", "serve", "--db", db, "--add-learner", "h200-learner", timeout=120)
    token = made.stdout.strip().splitlines()[-1] if made.returncode == 0 else ""
    note(f"--add-learner: rc {made.returncode}; token on the last line: {bool(token)}")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = folder / "serve.log"
    serve = [sys.executable, "-m", "tilescope", "puzzles", "serve", "--db", db, "--port", str(port)]
    serve += ["--per-minute", "100", *(["--ray", address] if address else [])]
    t0 = time.perf_counter()
    with open(log, "w") as sink:
        server = subprocess.Popen(serve, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
    while "ready on" not in log.read_text() and server.poll() is None and time.perf_counter() - t0 < 180:
        time.sleep(0.5)
    note(f"server up in {time.perf_counter() - t0:.1f} s: {[x for x in log.read_text().splitlines() if 'serve:' in x]}")

    files = FILES[: args.files]
    ids: list[int | None] = []
    for puzzle, rel in files:
        path = (CONTENT / rel).resolve()
        body = {"puzzle": puzzle, "filename": path.name, "source": path.read_text(), "client_key": rel}
        status, answer = api(url + "/api/submissions", token, body)
        ids.append(answer["id"] if status == 201 else None)
        if status != 201:
            note(f"submit {rel}: {status} {answer}")
    t1 = time.perf_counter()
    verdicts: dict[int, Any] = {}
    while len(verdicts) < sum(1 for i in ids if i) and time.perf_counter() - t1 < args.grade_budget_s:
        for number in ids:
            if number and number not in verdicts:
                status, answer = api(f"{url}/api/submissions/{number}", token)
                if status == 200 and answer.get("verdict"):
                    verdicts[number] = answer
        time.sleep(1.0)
    note(f"{len(verdicts)}/{len(files)} verdicts in {time.perf_counter() - t1:.1f} s")
    try:
        shell = tilescope(
            "puzzles", "submit", "1", str(CONTENT / FILES[0][1]), "--server", url, "--json",
            timeout=120, env={"TILESCOPE_TOKEN": token},
        )  # fmt: skip
        note(f"puzzles submit (shell): rc {shell.returncode}; {shell.stderr.strip()[-300:]}")
    except subprocess.TimeoutExpired:
        note("puzzles submit (shell): no verdict in 120 s")
    page = api(url + "/", token, cookie=True)[1]
    (out / "server-page.html").write_text(str(page))
    server.terminate()
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        server.kill()
    (out / "server-serve-log.txt").write_text(log.read_text()[-20000:])
    ray_head.terminate()  # --block: the head stops its node's processes on SIGTERM
    try:
        ray_head.wait(60)
    except subprocess.TimeoutExpired:
        ray_head.kill()
    ray_log.close()

    rows: list[dict[str, Any]] = []
    for (puzzle, rel), number in zip(files, ids, strict=True):
        if time.perf_counter() - t0 > args.deadline_s:
            note(f"out of time: {puzzle} {rel} not checked")
            continue
        path = (CONTENT / rel).resolve()
        t = time.perf_counter()
        try:
            done = tilescope("puzzles", "check", puzzle, str(path), "--json", timeout=args.check_timeout_s)
            check = json.loads(done.stdout) if done.stdout.strip().startswith("{") else None
            why = None if check else (done.stderr.strip()[-300:] or f"rc {done.returncode}")
        except subprocess.TimeoutExpired:
            check, why = None, "timed out"
        answer = verdicts.get(number or -1)
        served = answer["verdict"]["report"] if answer else None
        a, b = key(served), key(check)
        same = served is not None and check is not None and all(a[k] == b[k] for k in ("passed", "failure", "device"))
        rows.append(
            {
                "puzzle": puzzle,
                "file": rel,
                "server": a,
                "check": b,
                "equal": same,
                "check_error": why,
                "node": answer["verdict"].get("node") if answer else None,
                "attempts": answer.get("attempts") if answer else None,
                "check_s": round(time.perf_counter() - t, 1),
            }
        )
        served_words = f"{a['passed']}/{a['failure']}/{a['device']} {a.get('time_us')} µs"
        check_words = f"{b['passed']}/{b['failure']}/{b['device']} {b.get('time_us')} µs"
        note(f"{'=' if same else '≠'} {puzzle} {rel}: server {served_words}; check {check_words}")
        (out / "server-results.json").write_text(json.dumps({"rows": rows, "said": said}, indent=1))
    equal = sum(1 for r in rows if r["equal"])
    note(f"verdicts equal to `puzzles check` on the same file: {equal}/{len(rows)}")
    (out / "server-results.json").write_text(json.dumps({"rows": rows, "said": said}, indent=1))
    (out / "server-summary.txt").write_text("\n".join(said) + "\n")


if __name__ == "__main__":
    main()

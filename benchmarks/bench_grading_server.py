"""The grading server under a class's load, with a node killed and the server restarted mid-run.

A Ray cluster of two nodes on this machine (``ray.cluster_utils.Cluster``: a head and a second raylet,
separate processes, loopback only, one CPU each, so two CPU grading slots: no GPU here, the tile
interpreter grades), the server (``tilescope puzzles serve --ray ADDRESS``) as its own process on a
SQLite file, and 200 learners (threads, each with their own token, over HTTP) submitting 1,000 files
in the first minutes: puzzle references and wrong files from ``puzzles/content`` (puzzles 01-03),
some of them with a line of the learner's own, so that those are files nobody submitted before and are
graded afresh; a byte-identical file's CPU verdict is copied (the page and the verdict say so). A bare
copy of a reference passes but is no one's pass on the leaderboard; one with a learner's line counts.

Mid-run the second node is killed (no graceful stop) while both slots grade, and comes back later;
then the server process is killed (SIGKILL) and started again on the same database. Learners whose
requests fail meanwhile retry with the same client key. At the end it prints throughput, queue waits
(p50/p95) and checks, from the database: every submission the learners were answered has exactly
one verdict, each verdict is what the puzzle's manifest expects of the file, and the leaderboard
counts each passing submission once.

    nice -n 10 .venv/bin/python benchmarks/bench_grading_server.py [--learners 200 --files 1000 --fresh 40]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from ray.cluster_utils import Cluster
from sqlalchemy import func, select
from tilescope.puzzles import catalog
from tilescope.puzzles.server.db import Submission, Verdict
from tilescope.puzzles.server.store import Store

ROOT = Path(__file__).resolve().parents[1]
PUZZLES = ("01", "02", "03")


def pool() -> list[tuple[str, str, str, str | None]]:
    """(puzzle, name, source, expected failure or None for a pass): each reference and each wrong file whose
    mistake a CPU check can catch and whose verdict does not depend on a time limit."""
    files = []
    for number in PUZZLES:
        p = catalog.get(number)
        files.append((p.id, "solution.py", p.solution_path.read_text(), None))
        for wrong in p.wrong:
            if wrong.gpu_only or wrong.expect in ("timeout", "child-exit", "out-of-memory"):
                continue
            files.append((p.id, Path(wrong.file).name, (p.folder / wrong.file).read_text(), wrong.expect))
    return files


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(url: str, token: str, body: dict[str, object] | None = None) -> tuple[int, dict[str, object]]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError):
        return 0, {}


class Server:
    def __init__(self, address: str, db: str, folder: Path) -> None:
        self.address, self.db, self.folder = address, db, folder
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, slots: int) -> float:
        """Start the server process and wait until ``slots`` slots are placed; the seconds that took."""
        started = time.perf_counter()
        self.starts += 1
        log = self.folder / f"serve-{self.starts}.log"
        command = [sys.executable, "-m", "tilescope", "puzzles", "serve", "--ray", self.address, "--db", self.db]
        command += ["--port", str(self.port), "--per-minute", "10"]
        with open(log, "wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        while log.read_text().count("ready on") < slots:
            if self.process.poll() is not None or time.perf_counter() - started > 300:
                raise SystemExit(f"the server did not start:\n{log.read_text()}")
            time.sleep(0.2)
        return time.perf_counter() - started

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def said(self) -> list[str]:
        lines = []
        for i in range(1, self.starts + 1):
            lines += [f"[server {i}] {line}" for line in (self.folder / f"serve-{i}.log").read_text().splitlines()]
        return lines


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--fresh", type=int, default=40, help="submissions with a line of the learner's own")
    parser.add_argument("--submit-s", type=float, default=240.0, help="the learners submit within these seconds")
    parser.add_argument("--kill-node-s", type=float, default=60.0)
    parser.add_argument("--node-back-s", type=float, default=150.0)
    parser.add_argument("--restart-server-s", type=float, default=120.0)
    parser.add_argument("--deadline-s", type=float, default=1200.0)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="tilescope-bench-server-"))
    rng = random.Random(7)
    files = pool()
    db = f"sqlite:///{folder / 'class.db'}"
    store = Store(db)
    tokens = [store.add_learner(f"learner-{i:03d}") for i in range(args.learners)]
    plan: list[tuple[int, int]] = [(i % args.learners, rng.randrange(len(files))) for i in range(args.files)]
    fresh = set(rng.sample(range(args.files), min(args.fresh, args.files)))

    node = {"num_cpus": 1, "object_store_memory": 128 << 20, "node_ip_address": "127.0.0.1"}
    nodes = Cluster(initialize_head=True, head_node_args=node)
    second = nodes.add_node(**node)
    address = "127.0.0.1:" + nodes.address.rsplit(":", 1)[1]  # the head listens on loopback only
    server = Server(address, db, folder)
    events: list[str] = []
    accepted: dict[int, tuple[int, int]] = {}  # submission id -> (learner, pool index)
    retries = [0]
    lock = threading.Lock()
    try:
        up = server.start(2)
        events.append(f"server up with 2 slots on 2 nodes in {up:.1f} s")
        t0 = time.perf_counter()

        def learner(who: int, items: list[tuple[float, int, int]]) -> None:
            for moment, index, choice in items:
                time.sleep(max(0.0, moment - (time.perf_counter() - t0)))
                puzzle, name, source, _ = files[choice]
                if index in fresh:
                    source += f"AUTHOR = 'learner-{who:03d}, try {index}'\n"  # not the reference's own text
                body = {"puzzle": puzzle, "filename": name, "source": source, "client_key": f"{who}-{index}"}
                while True:
                    status, answer = request(server.url + "/api/submissions", tokens[who], body)
                    if status == 201:
                        break
                    with lock:
                        retries[0] += 1
                    time.sleep(1.0)  # the server is restarting, or the learner is over their rate
                with lock:
                    accepted[int(answer["id"])] = (who, choice)  # type: ignore[arg-type]

        per_learner: dict[int, list[tuple[float, int, int]]] = {}
        for index, (who, choice) in enumerate(plan):
            per_learner.setdefault(who, []).append((rng.uniform(0, args.submit_s), index, choice))
        for items in per_learner.values():
            items.sort()
        threads = [threading.Thread(target=learner, args=(w, items), daemon=True) for w, items in per_learner.items()]
        for t in threads:
            t.start()

        def at(seconds: float) -> None:
            time.sleep(max(0.0, seconds - (time.perf_counter() - t0)))

        faults = sorted(
            [(args.kill_node_s, "kill"), (args.restart_server_s, "restart"), (args.node_back_s, "back")],
        )
        for moment, fault in faults:
            at(moment)
            counts = store.counts()
            if fault == "kill":
                nodes.remove_node(second, allow_graceful=False)
                events.append(
                    f"{moment:.0f} s: second node killed ({counts['grading']} grading, {counts['queued']} queued)"
                )
            elif fault == "back":
                second = nodes.add_node(**node)
                events.append(f"{moment:.0f} s: a second node joins again")
            else:
                server.kill()
                events.append(
                    f"{moment:.0f} s: server process killed ({counts['grading']} grading, {counts['queued']} queued)"
                )
                back = server.start(1)
                events.append(f"{time.perf_counter() - t0:.0f} s: server up again ({back:.1f} s)")
        for t in threads:
            t.join(args.deadline_s)
        submitted_s = time.perf_counter() - t0
        while store.counts()["done"] < args.files and time.perf_counter() - t0 < args.deadline_s:
            time.sleep(1.0)
        wall = time.perf_counter() - t0
    finally:
        server.stop()
        nodes.shutdown()

    with store.session() as s:
        subs = s.scalars(select(Submission)).all()
        verdicts = {v.submission_id: v for v in s.scalars(select(Verdict)).all()}
        per_submission = s.execute(select(Verdict.submission_id, func.count()).group_by(Verdict.submission_id)).all()
    wrong = []
    for sub in subs:
        verdict = verdicts.get(sub.id)
        expected = files[accepted[sub.id][1]][3] if sub.id in accepted else "?"
        if verdict is None or verdict.failure != expected or verdict.passed != (expected is None):
            wrong.append((sub.id, expected, None if verdict is None else verdict.failure))
    passes = sum(1 for v in verdicts.values() if v.passed and not v.reference_copy)
    board = sum(e["passes"] for p in PUZZLES for e in store.leaderboard(p))
    waits = [s.first_claimed_at - s.created_at for s in subs if s.first_claimed_at is not None]
    turnaround = [verdicts[s.id].graded_at - s.created_at for s in subs if s.id in verdicts]
    graded = [v for v in verdicts.values() if v.reused_from is None]
    seconds = [v.grading_s for v in graded if v.grading_s]
    first, last = min(s.created_at for s in subs), max(v.graded_at for v in verdicts.values())
    said = server.said()
    store.close()
    shutil.rmtree(folder, ignore_errors=True)

    p50, p95 = (percentile(waits, q) for q in (0.5, 0.95))
    t50, t95 = (percentile(turnaround, q) for q in (0.5, 0.95))
    every = (
        len(subs) == len(accepted) == args.files
        and all(n == 1 for _, n in per_submission)
        and len(verdicts) == len(subs)
    )
    lines = [
        f"{args.learners} learners, {args.files} files ({len(files)} distinct files of puzzles 01-03, {len(fresh)} "
        f"with a line of the learner's own); 2 CPU grading slots on a 2-node local Ray cluster; {os.cpu_count()} cores",
        *(f"  {line}" for line in events),
        *(f"  {line}" for line in said if "lost" in line or "queued again" in line or "dropped" in line),
        f"all submitted in {submitted_s:.0f} s; {len(verdicts)} verdicts after {wall:.0f} s; "
        f"throughput {len(verdicts) / (last - first):.2f} verdicts/s over {last - first:.0f} s",
        f"graded afresh: {len(graded)} ({statistics.median(seconds):.1f} s median, {percentile(seconds, 0.95):.1f} s "
        f"p95 on a slot); copied from a byte-identical file: {len(verdicts) - len(graded)}",
        f"queue wait (submitted -> first taken by a slot): p50 {p50:.1f} s, p95 {p95:.1f} s; "
        f"submitted -> verdict: p50 {t50:.1f} s, p95 {t95:.1f} s",
        f"taken more than once (a node or the server lost mid-grading): {sum(1 for s in subs if s.attempts > 1)}; "
        f"learners' retries: {retries[0]}",
        f"submissions answered to learners: {len(accepted)}; in the database: {len(subs)}; with exactly one verdict: "
        f"{sum(1 for _, n in per_submission if n == 1)}",
        f"every submission exactly one verdict: {every}; verdicts as the manifest expects: "
        f"{len(subs) - len(wrong)}/{len(subs)}",
        f"passing verdicts (bare copies of a reference left out) {passes}, leaderboard passes {board}: "
        f"none counted twice: {passes == board}",
    ]
    print("\n".join(lines))
    if wrong:
        print(f"  unexpected: {wrong[:10]}")
    if not (every and not wrong and passes == board):
        sys.exit(1)


if __name__ == "__main__":
    main()

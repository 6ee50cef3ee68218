"""Time ``puzzles check --cpu`` (the tile interpreter) on every puzzle without a GPU.

For each puzzle: the reference must pass, every wrong solution not marked ``gpu_only`` must fail
with its declared kind, the untouched starter must fail, and each check must take at most 30 s.
One warm session and analyzer serve every check, as in ``tilescope puzzles check --cpu`` over a
folder. Prints one line per check and exits 1 when any rule does not hold.

    .venv/bin/python benchmarks/bench_puzzles_cpu.py [PUZZLE ...]
"""

from __future__ import annotations

import sys
import time

from tilescope.core.compiler.service import Analyzer
from tilescope.puzzles import catalog, judge
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.session import Session

LIMIT_S = 30.0


def main(selected: list[str]) -> int:
    bad = 0
    session = Session(cpu_only=True)
    analyzer = Analyzer()
    try:
        for p in catalog.puzzles():
            if selected and p.id not in selected:
                continue
            checks = [("reference", p.solution_path, None, None), ("starter", p.starter_path, "any", None)]
            checks += [(w.file, p.folder / w.file, w.expect, w.timeout_s) for w in p.wrong if w.gpu_only is None]
            for label, path, expect, limit in checks:
                start = time.perf_counter()
                route = CpuRoute(analyzer, ptxas=False)
                report = judge.check(p, path, route, session=session, seed=1, timeout_s=limit or 60.0)
                seconds = time.perf_counter() - start
                ok = report.passed if expect is None else not report.passed and expect in ("any", report.failure)
                ok = ok and seconds <= LIMIT_S
                bad += not ok
                got = "passed" if report.passed else str(report.failure)
                verdict = "ok" if ok else "FAIL"
                print(f"{p.id} {label:34} {got:16} expect {expect or 'pass':16} {seconds:6.1f} s {verdict}")
                if not ok:
                    print("    " + report.summary[:300])
                sys.stdout.flush()
    finally:
        analyzer.close()
        session.close()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``tilescope variants`` says how many lowerings it starts and about how long they take, asks before
a long run on a terminal, refuses one on a pipe without ``--yes``, and shows how far it is."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.cli import variants_cmd
from tilescope.core.cli.terminal import Status
from tilescope.core.compiler.cluster import Request
from tilescope.core.compiler.variants import Job, VariantPlan, pool

FIXTURE = Path(__file__).resolve().parents[1] / "core" / "fixtures" / "autotuned.py"


def _plan(configs: int, targets: int = 5) -> VariantPlan:
    names = [f"sm_{80 + t}" for t in range(targets)]
    jobs = [Job("matmul", target, index) for target in names for index in range(configs)]

    def request(job: Job) -> Request:
        return Request("x.py", "", {"target": job.target})

    return VariantPlan("x.py", "", jobs, {}, {"matmul": [{}] * configs}, request, seconds_each=2.0)


class _Stream(io.StringIO):
    def __init__(self, tty: bool, text: str = "") -> None:
        super().__init__(text)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def _streams(monkeypatch: pytest.MonkeyPatch, tty: bool, answer: str = "") -> _Stream:
    err = _Stream(tty)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdin", _Stream(tty, answer))
    return err


def test_a_long_run_on_a_pipe_is_refused_with_the_count_and_how_to_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _streams(monkeypatch, tty=False)
    assert variants_cmd._announce(_plan(216), slots=2, yes=False) == 2
    said = err.getvalue().splitlines()
    assert said[0] == (
        "tilescope variants: 1080 lowerings to go (1 kernel, up to 216 autotune configs), about 18 min with 2 workers"
    )
    assert said[1].startswith("tilescope variants: not starting 1080 lowerings without --yes (--configs 0,1,2")


def test_yes_goes_on_and_a_short_run_is_only_announced(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _streams(monkeypatch, tty=False)
    assert variants_cmd._announce(_plan(216), slots=2, yes=True) is None
    assert variants_cmd._announce(_plan(3), slots=1, yes=False) is None
    assert err.getvalue().splitlines()[1] == (
        "tilescope variants: 15 lowerings to go (1 kernel, up to 3 autotune configs), about 30 s with 1 worker"
    )


@pytest.mark.parametrize(("answer", "status"), [("y\n", None), ("\n", 1)])
def test_a_long_run_on_a_terminal_asks_first(monkeypatch: pytest.MonkeyPatch, answer: str, status: int | None) -> None:
    err = _streams(monkeypatch, tty=True, answer=answer)
    assert variants_cmd._announce(_plan(216), slots=2, yes=False) == status
    assert "Lower all 1080? [y/N] " in err.getvalue()


def test_on_a_pipe_progress_is_a_line_every_fifty(monkeypatch: pytest.MonkeyPatch) -> None:
    err = _streams(monkeypatch, tty=False)
    step = variants_cmd._progress(Status("lowering", stream=err))
    for done in range(1, 121):
        step(done, 120, done - 1)
    lines = err.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "tilescope variants: 50/120 lowered",
        "tilescope variants: 100/120 lowered",
    ]


def test_the_pool_reports_each_lowering_as_it_finishes() -> None:
    seen: list[tuple[int, int]] = []
    with pool(1, timeout_s=120) as workers:
        source = FIXTURE.read_text()
        requests = [Request(str(FIXTURE), source, {"target": "c", "kernel": "nope"}) for _ in range(3)]
        results = workers.map(requests, lambda done, total, _index: seen.append((done, total)))
    assert len(results) == 3 and seen == [(1, 3), (2, 3), (3, 3)]


def test_variants_announces_the_lowerings_before_starting_them() -> None:
    """The count comes before any lowering ends; the run is ended there (its workers go with it)."""
    command = [sys.executable, "-m", "tilescope", "variants", str(FIXTURE), "--kernel", "tuned_gemm"]
    process = subprocess.Popen(
        [*command, "--targets", "sm_80,sm_90", "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")},
    )
    assert process.stderr is not None
    said: list[str] = []
    try:
        for line in process.stderr:
            said.append(line)
            if "lowerings to go" in line:
                break
    finally:
        process.kill()
        process.wait()
    assert said and said[-1].startswith(
        "tilescope variants: 5 lowerings to go (1 kernel, up to 3 autotune configs), about "
    ), "".join(said)
    assert not any("lowered" in line for line in said), said  # announced before the first one ended

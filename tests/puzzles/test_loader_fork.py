"""The warm loader (``loader_zygote``, ``loader_fork``): each check's loader is forked from it, and what one
check's code leaves (files, a process, its text) never reaches the next check's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.sandbox import landlock
from tilescope.puzzles import catalog, judge
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.loader_zygote import Relay
from tilescope.puzzles.session import Session

FIXTURES = Path(__file__).parent / "fixtures"


def _processes_naming(token: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token in Path("/proc", entry, "cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.fixture
def session() -> Iterator[Session]:
    s = Session(cpu_only=True)
    yield s
    s.close()


@pytest.mark.skipif(landlock.abi() < 1, reason="this kernel offers no Landlock: loaders are started fresh")
def test_what_one_checks_code_leaves_never_reaches_the_next(session: Session) -> None:
    puzzle, route = catalog.get(1), CpuRoute(lower=False)
    first = judge.check(puzzle, FIXTURES / "leaves_traces.py", route, session=session, seed=1)
    assert first.passed, first.summary  # it reached the warm loader otherwise (it says how)
    assert first.not_checked == ["performance: it needs a CUDA GPU"]  # sealed: nothing else unchecked
    assert _processes_naming(b"LEARNER-A-LEFTOVER") == [], "the process the first file started outlived its check"
    zygote = session._zygote
    second = judge.check(puzzle, FIXTURES / "finds_traces.py", route, session=session, seed=1)
    assert second.passed, second.summary  # it found the first file's files or text otherwise
    assert session._zygote is zygote and zygote is not None and zygote.alive(), "the warm loader was not kept"


def test_the_relay_keeps_no_learners_bytes_once_it_has_passed_them_on(tmp_path: Path) -> None:
    control_r, control_w = os.pipe()
    replies_r, replies_w = os.pipe()
    child_out_r, child_out_w = os.pipe()
    relay = Relay(control_r, replies_w, str(tmp_path))
    source = b'{"source": "LEARNER-A-TOKEN"}\n'
    os.write(control_w, f"T 7 {len(source)}\n".encode() + source)
    assert relay.command()  # for a child that is not the current one: read, dropped
    assert not any(relay.buffer)
    relay.n, relay.stdout = 3, child_out_r
    os.write(child_out_w, b'{"op": "built", "prim_func": "LEARNER-A-KERNEL"}\n')
    relay.forward(child_out_r, "O")
    assert not any(relay.buffer)
    sent = os.read(replies_r, 4096)
    assert sent.startswith(b"O 3 49\n") and sent.endswith(b'LEARNER-A-KERNEL"}\n'), sent
    for fd in (control_r, control_w, replies_r, replies_w, child_out_r, child_out_w):
        os.close(fd)

"""The per-user grading service: ``puzzles check --service`` starts it once, later checks reuse the
same warm process (its verdicts are the grader's, as in-process), and ``stop`` ends it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tilescope.core.cli import main
from tilescope.puzzles import catalog, service


def _check(capsys: pytest.CaptureFixture[str], file: Path) -> dict:
    code = main(["puzzles", "check", "1", str(file), "--json", "--cpu", "--service", "--timeout", "30"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["passed"] else 1)
    return report


def test_checks_reuse_one_warm_service_and_stop_ends_it(capsys: pytest.CaptureFixture[str]) -> None:
    p = catalog.get(1)
    try:
        forged = _check(capsys, p.folder / "wrong" / "forged_report.py")
        assert forged["failure"] == "protocol-violation" and not forged["passed"]
        assert service.socket_path().exists()
        start = time.monotonic()
        unmasked = _check(capsys, p.folder / "wrong" / "unmasked.py")
        assert unmasked["failure"] == "out-of-bounds"
        warm = time.monotonic() - start
        first = service.request({"op": "ping"}, 30)
        assert "error" in first  # an unknown request is answered, and the service stays up
        assert service.socket_path().exists(), warm
    finally:
        assert service.stop()
    for _ in range(100):
        if not service.socket_path().exists():
            break
        time.sleep(0.1)
    assert not service.socket_path().exists()

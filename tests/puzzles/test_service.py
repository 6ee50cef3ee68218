"""The per-user grading service: ``puzzles check --service`` starts it once, later checks reuse the
same warm process (its verdicts are the grader's, as in-process), a check from the shell imports
neither torch nor TileLang, and ``stop`` ends it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tilescope.core.cli.main import main
from tilescope.puzzles import catalog, service


def _check(capsys: pytest.CaptureFixture[str], file: Path) -> dict:
    code = main(["puzzles", "check", "1", str(file), "--json", "--cpu", "--service", "--timeout", "30"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["passed"] else 1)
    return report


def _shell_check(file: Path) -> dict:
    """A check from a fresh interpreter, as from the shell: its report, and which heavy modules it imported."""
    code = (
        "import json, sys\n"
        "from tilescope.core.cli.main import main\n"
        f"main(['puzzles', 'check', '1', {str(file)!r}, '--json', '--cpu', '--service', '--timeout', '30'])\n"
        "heavy = [m for m in ('torch', 'tilelang', 'tvm') if m in sys.modules]\n"
        "print(json.dumps(heavy), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    return {**json.loads(done.stdout), "imported": json.loads(done.stderr.strip().splitlines()[-1])}


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
        shell = _shell_check(p.folder / "wrong" / "unmasked.py")
        assert shell["failure"] == "out-of-bounds" and shell["imported"] == []  # the shell only draws the report
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

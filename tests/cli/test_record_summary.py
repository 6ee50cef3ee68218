"""``record``'s summary quotes the line of the program's last error that says what went wrong, not
the first line of a long compiler log."""

from __future__ import annotations

import sys

from tests.cli.helpers import tilescope

LOG = (
    "Compilation error:\n#if defined(_MSC_VER)\n  #pragma once\n#endif\n"
    "nvcc fatal   : Unsupported gpu architecture 'sm_50'"
)


def test_the_summary_quotes_the_cause(tmp_path) -> None:
    program = f"raise RuntimeError({LOG!r})"
    done = tilescope("record", "--", sys.executable, "-c", program, cwd=tmp_path, timeout=120)
    assert done.returncode == 1
    last = done.stdout.strip().splitlines()[-1]
    assert "RuntimeError: nvcc fatal   : Unsupported gpu architecture 'sm_50'" in last, done.stdout
    assert "_MSC_VER" not in done.stdout


def test_json_summary_and_a_time_limit(tmp_path) -> None:
    program = "import time; time.sleep(30)"
    done = tilescope("record", "--json", "--timeout", "1", "--", sys.executable, "-c", program, cwd=tmp_path)
    assert done.returncode == 124
    assert '"exit_status": 124' in done.stdout
    assert "stopped after 1 s" in done.stderr

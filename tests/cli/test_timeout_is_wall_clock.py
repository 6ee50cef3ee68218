"""``--timeout S`` is the user's wall clock: a file whose top level never finishes is answered within
S plus a few seconds from the moment the command starts (worker start included), on a quiet machine
and with the command's processes given a third of one CPU (as on a machine whose two cores are busy);
a CPU-time limit would never end it."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, TOP_LEVEL_FOREVER, starved

pytestmark = pytest.mark.slow
TIMEOUT_S = 20
WITHIN_S = 30


@pytest.mark.parametrize("share", [1.0, 1 / 3], ids=["quiet", "a-third-of-a-cpu"])
def test_check_of_a_module_that_never_loads_answers_within_its_timeout(share: float) -> None:
    with starved(share):
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "tilescope", "check", str(TOP_LEVEL_FOREVER), "--timeout", str(TIMEOUT_S), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - started
    assert took < WITHIN_S, took
    ((kernel,),) = [file["kernels"] for file in json.loads(done.stdout)["files"]]
    (error,) = kernel["diagnostics"]
    assert error["code"] == "timeout" and f"within {TIMEOUT_S} s" in error["message"], error

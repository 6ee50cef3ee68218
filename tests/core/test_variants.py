"""``tilescope variants``: each row is what ``check --target T`` gives, configs that cannot run say why."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.cli.terminal import display_path
from tilescope.core.cli.variant_diff import diff
from tilescope.core.cli.variants_cmd import render
from tilescope.core.compiler.service import Analyzer
from tilescope.core.compiler.variants import DEFAULT_TARGETS, Pool, pool, run_variants
from tilescope.core.model import VariantsReport, from_json, to_json, untimed

from tests.conftest import EXAMPLES

FIXTURE = Path(__file__).parent / "fixtures" / "autotuned.py"


@pytest.fixture(scope="module")
def workers() -> Iterator[Pool]:
    with pool(2, timeout_s=120) as instance:
        yield instance


def test_each_target_of_the_gemm_equals_check_for_that_target(workers: Pool, analyzer: Analyzer) -> None:
    report = run_variants(workers, str(EXAMPLES / "gemm.py"))
    assert [v.target for v in report.variants] == list(DEFAULT_TARGETS)
    for variant in report.variants:
        check = analyzer.analyze(str(EXAMPLES / "gemm.py"), target=variant.target)
        assert untimed(to_json(variant.kernels)) == untimed(to_json(check.kernels)), variant.target
        assert variant.diagnostics == check.diagnostics
        assert variant.status == "fits" and variant.kernels[0].passes
    threads = {v.target: v.kernels[0].launch.threads_after_ws for v in report.variants if v.kernels[0].launch}
    assert threads["sm_80"] == 128 and threads["sm_90"] == 256  # Hopper adds a producer warpgroup


def test_every_config_is_listed_and_the_oversized_one_says_why_at_its_line(workers: Pool) -> None:
    report = run_variants(workers, str(FIXTURE), kernel="tuned_gemm", targets=["sm_80"])
    rows = [(v.config_index, v.status, v.kernels[0].shared_bytes) for v in report.variants]
    assert rows == [(0, "exceeds-shared-memory", 524288), (1, "fits", 49152), (2, "fits", 16384)]
    oversized = report.variants[0]
    assert oversized.line == 22 and "166912 bytes sm_80 allows" in (oversized.reason or "")
    assert oversized.config == {"block_M": 256, "block_N": 256, "block_K": 128, "num_stages": 4}
    text = render(report)
    assert f"{display_path(FIXTURE)}:22: sm_80:0: exceeds-shared-memory: Kernel 'tuned_gemm' needs 524288 bytes" in text
    assert text.splitlines()[-1] == "3 variants: 2 can run, 1 cannot"


def test_a_diff_names_the_threads_layout_and_passes_warp_specialisation_changes(workers: Pool) -> None:
    report = run_variants(workers, str(EXAMPLES / "gemm.py"), targets=["sm_80", "sm_90"])
    changes = diff(report.variants[0], report.variants[1], "sm_80", "sm_90")
    assert {(c.what, c.a, c.b) for c in changes.resources} >= {("threads", "128", "256")}
    assert [c.what for c in changes.layouts] == ["layout C_local"]
    assert "pass tl.AutoWarpSpecialization" in {c.what for c in changes.passes if c.a is None}


def test_variants_json_round_trips_under_the_schema() -> None:
    command = ["variants", str(FIXTURE), "--kernel", "tune_api", "--targets", "sm_90", "--configs", "1,2", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", *command, "-j", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    report = from_json(VariantsReport, data)
    assert [(v.config_index, v.status) for v in report.variants] == [(1, "fits"), (2, "fits")]
    assert to_json(report) == data

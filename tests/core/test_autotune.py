"""``@autotune`` and ``AutoTuner.from_kernel`` kernels: configs lowered one by one, the autotuner never run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tilescope.core.compiler.service import Analyzer

FIXTURE = Path(__file__).parent / "fixtures" / "autotuned.py"


def test_the_first_config_that_fits_is_analysed_and_the_oversized_one_says_why(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURE), kernel="tuned_gemm")
    kernel = result.kernel("tuned_gemm")
    assert kernel is not None and kernel.autotune is not None
    tune = kernel.autotune
    assert (tune.chosen, tune.chosen_by, tune.line) == (1, "first-fit", 16)
    assert kernel.args["block_M"] == 128 and kernel.args["num_stages"] == 3 and kernel.passes
    oversized = tune.configs[0]
    assert oversized.status == "exceeds-shared-memory"
    assert oversized.shared_bytes is not None and oversized.shared_bytes > 227 * 1024
    assert oversized.line == 22  # the first shared tile
    assert [c.status for c in tune.configs[1:]] == ["fits", "not-lowered"]
    assert not [d for d in kernel.diagnostics if d.severity == "error"]


def test_config_all_lowers_every_config_for_the_summary(analyzer: Analyzer) -> None:
    kernel = analyzer.analyze(str(FIXTURE), kernel="tuned_gemm", args={"config": "all"}).kernel("tuned_gemm")
    assert kernel is not None and kernel.autotune is not None
    assert kernel.autotune.summary == "3 configs: 2 fit, 1 exceeds shared memory"
    assert [c.threads for c in kernel.autotune.configs[1:]] == [256, 256]  # a producer warpgroup on sm_90


def test_config_n_picks_a_config_even_one_that_does_not_fit(analyzer: Analyzer) -> None:
    kernel = analyzer.analyze(str(FIXTURE), kernel="tuned_gemm", args={"config": 0}).kernel("tuned_gemm")
    assert kernel is not None and kernel.autotune is not None
    assert (kernel.autotune.chosen, kernel.autotune.chosen_by) == (0, "directive")
    assert [d.code for d in kernel.diagnostics if d.severity == "error"] == ["shared-memory-overflow"]


def test_a_config_out_of_range_is_an_error_at_the_decorator(analyzer: Analyzer) -> None:
    kernel = analyzer.analyze(str(FIXTURE), kernel="tuned_gemm", args={"config": 7}).kernel("tuned_gemm")
    assert kernel is not None
    bad = [d for d in kernel.diagnostics if d.code == "autotune-config"]
    assert bad and bad[0].span.line == 16 and "0..2" in bad[0].message


def test_the_autotuner_api_style_is_analysed_without_starting_the_tuner(analyzer: Analyzer) -> None:
    kernel = analyzer.analyze(str(FIXTURE), kernel="tune_api").kernel("tune_api")
    assert kernel is not None and kernel.autotune is not None, kernel
    assert kernel.autotune.chosen == 1 and kernel.passes
    assert kernel.args["M"] == 1024 and kernel.args["block_K"] == 32
    assert not [d for d in kernel.diagnostics if d.severity == "error"]


GUARDED = """
import sys
sys.path.insert(0, sys.argv[1])
from tilescope.core.worker import autotune
autotune.guard()
import autotuned
from tilelang.autotuner import AutoTuner
for start in (lambda: autotuned.tuned_gemm(1024, 1024, 1024), lambda: autotuned.tune_api(1024, 1024, 1024)):
    try:
        start()
    except autotune.AutotunerBlocked as err:
        print("blocked:", err)
"""


def test_the_worker_guard_stops_both_autotuner_styles_before_they_start() -> None:
    done = subprocess.run(
        [sys.executable, "-c", GUARDED, str(FIXTURE.parent)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("blocked: Tilescope never runs the autotuner") == 2, done.stdout


SMALL = {"M": 128, "N": 128, "K": 64}


def test_run_interprets_the_config_check_analyses_in_both_styles(analyzer: Analyzer) -> None:
    """``run`` builds the config the model describes (the first that fits), says which, and its output
    is the whole product: the autotuner itself never starts."""
    for name in ("tuned_gemm", "tune_api"):
        model = analyzer.analyze(str(FIXTURE), kernel=name, args=SMALL).kernel(name)
        assert model.autotune is not None and model.autotune.chosen == 1, model.diagnostics
        report = analyzer.run(str(FIXTURE), kernel=name, args=SMALL)
        assert report.error is None, report.error
        assert report.config is not None and report.config.startswith("config 1 of 3 (block_M=128"), report.config
        assert report.args["block_M"] == 128 and report.args["num_stages"] == 3
        [output] = report.outputs
        assert output.unwritten == 0 and output.nan == 0


def test_run_config_n_builds_that_config_and_refuses_one_that_does_not_exist(analyzer: Analyzer) -> None:
    report = analyzer.run(str(FIXTURE), kernel="tuned_gemm", args={**SMALL, "config": 2})
    assert report.error is None and report.grid == [2, 2], report.error
    assert report.config is not None and report.config.endswith("as asked")
    missing = analyzer.run(str(FIXTURE), kernel="tuned_gemm", args={**SMALL, "config": 7})
    assert missing.error == "kernel 'tuned_gemm' has configs 0 to 2, not 7"
    plain = analyzer.run("examples/elementwise_add.py", args={"N": 4096, "config": 1})
    assert plain.error == "kernel 'elementwise_add' is not autotuned: it has no config 1"

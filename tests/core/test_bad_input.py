"""Broken kernels become diagnostics at the right line, within their timeout, and never kill the service."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import Diagnostic, FileAnalysis

FIXTURES = Path(__file__).parent / "fixtures"


def _only_error(result: FileAnalysis) -> Diagnostic:
    errors = [d for d in result.all_diagnostics() if d.severity == "error"]
    assert len(errors) == 1, result.all_diagnostics()
    return errors[0]


@pytest.fixture(scope="module")
def strict() -> Analyzer:
    """A separate worker with tight limits, so restarts do not disturb the shared one."""
    with Analyzer(timeout_s=15, memory_mb=3072) as analyzer:
        yield analyzer


def test_kernel_that_raises_points_at_the_raising_line(analyzer: Analyzer) -> None:
    error = _only_error(analyzer.analyze(str(FIXTURES / "raises.py")))
    assert (error.code, error.span.line) == ("build-error", 7)
    assert "integer division or modulo by zero" in error.message
    assert error.detail and "Traceback" in error.detail


def test_gemm_shape_mismatch_is_tilelangs_own_check_at_the_gemm_line(analyzer: Analyzer) -> None:
    error = _only_error(analyzer.analyze(str(FIXTURES / "gemm_wrong_shape.py")))
    assert error.span.line == 19
    assert "T.gemm K shape check failed: K_A = 32, K_B = 128" in error.message


def test_syntax_error_needs_no_worker(analyzer: Analyzer) -> None:
    error = _only_error(analyzer.analyze(str(FIXTURES / "syntax_error.py")))
    assert (error.code, error.span.line) == ("syntax-error", 13)


def test_file_without_kernels_says_so(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "no_kernels.py"))
    assert [d.code for d in result.diagnostics] == ["no-kernels"]
    assert result.kernels == []


def test_unknown_target_is_refused_before_any_work(analyzer: Analyzer) -> None:
    error = _only_error(analyzer.analyze(str(FIXTURES / "module_prim_func.py"), target="sm_xx"))
    assert error.code == "bad-target" and "sm_xx" in error.message


def test_missing_arguments_are_a_warning_naming_them(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "needs_args.py"))
    (warning,) = result.all_diagnostics()
    assert warning.code == "missing-args" and "N, factor" in warning.message and warning.span.line == 4


def test_hang_times_out_at_the_kernel_and_the_worker_recovers(strict: Analyzer) -> None:
    strict.warm()
    start = time.monotonic()
    error = _only_error(strict.analyze(str(FIXTURES / "hangs.py")))
    assert time.monotonic() - start < 15 * 3 + 5  # 15 s of computing, on a loaded machine at most 3x that
    assert (error.code, error.span.line) == ("timeout", 4)
    after = strict.analyze(str(FIXTURES / "module_prim_func.py"))
    assert after.ok and after.kernels[0].passes


def test_the_timeout_is_the_users_clock_and_the_warm_worker_survives_it() -> None:
    # 6 s of wall time, about half of it computing (a build on a machine whose cores other work shares):
    # past a 4 s timeout it is stopped at 4 s, as the user counts, not after 4 s of its own computing.
    with Analyzer(timeout_s=4) as analyzer:
        analyzer.warm()
        for fixture in ("slow_on_a_busy_machine.py", "waits_forever.py"):
            start = time.monotonic()
            error = _only_error(analyzer.analyze(str(FIXTURES / fixture)))
            assert error.code == "timeout" and time.monotonic() - start < 4 + 2, (fixture, error)
        assert analyzer.analyze(str(FIXTURES / "module_prim_func.py")).ok
        assert analyzer.restarts == 0  # only the request's child was ended


def test_process_exit_is_a_crash_diagnostic_and_the_warm_worker_goes_on(strict: Analyzer) -> None:
    restarts = strict.restarts
    error = _only_error(strict.analyze(str(FIXTURES / "exits.py")))
    assert (error.code, error.span.line) == ("worker-crash", 6)
    assert "exited with code 3" in error.message
    assert strict.analyze(str(FIXTURES / "module_prim_func.py")).ok
    assert strict.restarts == restarts  # only the request's child exited


def test_sys_exit_at_load_is_a_gpu_diagnostic_and_the_worker_survives(strict: Analyzer) -> None:
    restarts = strict.restarts
    result = strict.analyze(str(FIXTURES / "probes_gpu.py"))
    (problem,) = result.all_diagnostics()
    assert (problem.code, problem.severity, problem.span.line) == ("needs-gpu", "warning", 8)
    assert "sys.exit(1) after printing 'Error: GPU Device is not detected'" in problem.message
    assert strict.analyze(str(FIXTURES / "module_prim_func.py")).ok
    assert strict.restarts == restarts


def test_sys_exit_while_building_is_a_build_error_and_the_worker_survives(strict: Analyzer) -> None:
    restarts = strict.restarts
    error = _only_error(strict.analyze(str(FIXTURES / "exits_while_building.py")))
    assert (error.code, error.span.line, error.kernel) == ("build-error", 8, "gives_up")
    assert "called sys.exit(2)" in error.message
    assert strict.analyze(str(FIXTURES / "module_prim_func.py")).ok
    assert strict.restarts == restarts


LOADS_ONCE = """\
import tilelang.language as T


def _config():
    open(MARKER, "a").write("load\\n")
    raise RuntimeError("no config here")


def first(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            pass

    return main


def second(N=_config()):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=128):
            pass

    return main
"""


def test_a_file_that_fails_to_load_is_executed_once_for_all_its_kernels(analyzer: Analyzer, tmp_path: Path) -> None:
    marker = tmp_path / "loads"
    (tmp_path / "two.py").write_text(LOADS_ONCE.replace("MARKER", repr(str(marker))))
    result = analyzer.analyze(str(tmp_path / "two.py"))
    assert [d.code for d in result.all_diagnostics()] == ["load-error"], result.all_diagnostics()
    assert len(result.discovered) == 2 and marker.read_text() == "load\n"


def test_unbounded_allocation_hits_the_memory_limit(strict: Analyzer) -> None:
    error = _only_error(strict.analyze(str(FIXTURES / "greedy.py")))
    assert error.span.line in (4, 7)
    assert "memory" in error.message
    assert strict.analyze(str(FIXTURES / "module_prim_func.py")).ok


def test_main_block_never_runs(analyzer: Analyzer, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = (FIXTURES / "module_prim_func.py").read_text() + (
        f"\nopen({str(marker)!r}, 'w').write('module level')\n"
        f"if __name__ == '__main__':\n    open({str(marker)!r}, 'w').write('main')\n"
    )
    kernel = tmp_path / "kernel.py"
    kernel.write_text(source)
    assert analyzer.analyze(str(kernel)).ok
    assert not marker.exists()


def test_the_worker_sees_no_gpu_even_on_a_gpu_machine(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "looks_for_gpu.py"))
    assert result.ok and result.kernels[0].passes, result.all_diagnostics()


def test_layout_inference_failure_names_fragments_and_ops(analyzer: Analyzer) -> None:
    error = _only_error(analyzer.analyze(str(FIXTURES / "layout_conflict.py")))
    assert (error.code, error.span.line) == ("layout-inference", 11)
    assert "A_local, row" in error.message
    assert "reduce_sum at line 10" in error.message and "parallel at line 11" in error.message
    assert "no available layout found" in error.message


def test_tilelangs_own_warnings_become_diagnostics_at_their_line(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "uninitialised_accumulator.py"), hazards_s=0)
    assert result.ok  # without the hazard check, which makes the same read an uninitialised-read error
    (warning,) = result.all_diagnostics()
    assert (warning.severity, warning.code, warning.span.line) == ("warning", "tilelang-warning", 23)
    assert "'C_local' is read before anything writes it" in warning.message
    assert warning.detail and "read before initialization" in warning.detail


def test_missing_module_names_it_and_the_interpreter(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "missing_module.py"))
    (problem,) = result.all_diagnostics()
    assert (problem.code, problem.severity, problem.span.line) == ("missing-module", "warning", 2)
    assert "'tilescope_absent_module'" in problem.message and analyzer.python in problem.message
    assert "--python" in problem.message


def test_gpu_query_while_building_is_answered_from_the_targets_device_profile(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "gpu_query.py"))
    (note,) = result.all_diagnostics()
    assert (note.code, note.severity, note.span.line) == ("device-profile", "information", 7)
    assert "get_num_sms()" in note.message and "H100" in note.message and "132 SMs" in note.message
    model = result.kernel("persistent")
    assert model is not None and model.launch is not None and model.launch.grid == [132]


def test_gpu_query_of_an_imported_library_is_answered_from_the_targets_device_profile(analyzer: Analyzer) -> None:
    """A sibling library that asks the device's name and SMs when imported: the load is answered as the target's
    part (an H100 for sm_90), as the dry run's fake device answers it, and the kernel is analysed."""
    result = analyzer.analyze(str(FIXTURES / "load_gpu_query" / "kernel.py"))
    (note,) = result.all_diagnostics()
    assert (note.code, note.severity, note.span.line) == ("device-profile", "information", 1)
    assert note.message.startswith("Loading the file asked for the GPU (torch.cuda.get_device_name()")
    assert "get_device_properties()" in note.message and "H100" in note.message
    model = result.kernel("copy")
    assert model is not None and model.launch is not None and model.launch.grid == [132]


def test_a_file_that_exits_without_a_gpu_is_loaded_and_built_on_the_targets_part(analyzer: Analyzer) -> None:
    """AMD's examples ask ``torch.cuda.is_available()`` while loading (their autotune configs) and building,
    and exit when it says no: answered as the dry run's fake device answers it, the kernels are analysed."""
    result = analyzer.analyze(str(FIXTURES / "probes_gpu_torch.py"))
    notes = [(d.code, d.severity, d.span.line) for d in result.all_diagnostics()]
    assert notes == [("device-profile", "information", 1), ("device-profile", "information", 27)]
    assert "torch.cuda.is_available()" in result.all_diagnostics()[0].message
    grids = {name: result.kernel(name) for name in ("probed", "probed_again")}
    assert {n: m.launch.grid for n, m in grids.items() if m and m.launch} == {"probed": [8], "probed_again": [4]}


def test_gpu_query_a_profile_cannot_answer_says_it_needs_a_gpu(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "gpu_query.py"), target="metal")
    (problem,) = result.all_diagnostics()
    assert (problem.code, problem.severity, problem.span.line) == ("needs-gpu", "warning", 8)
    assert "calls 'get_num_sms()', which needs a GPU" in problem.message and "directive" in problem.message


def test_a_factory_of_factories_is_not_a_kernel_and_not_an_error(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(FIXTURES / "factory_of_factories.py"))
    (note,) = result.all_diagnostics()
    assert (note.code, note.severity, note.span.line) == ("not-a-kernel", "information", 4)
    assert "returned a function, not a T.prim_func" in note.message


def test_a_worker_ended_by_a_gpu_probe_says_it_needs_a_gpu(strict: Analyzer) -> None:
    result = strict.analyze(str(FIXTURES / "exits_without_gpu.py"))
    (problem,) = result.all_diagnostics()
    assert (problem.code, problem.severity, problem.span.line) == ("needs-gpu", "warning", 12)
    assert "GPU Device is not detected" in problem.message

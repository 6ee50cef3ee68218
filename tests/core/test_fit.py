"""The verdict on a lowered kernel: the first error decides; over 1024 threads or spilling is said too."""

from __future__ import annotations

from tilescope.core.fit import fit, summary
from tilescope.core.model import Diagnostic, KernelModel, Launch, PassRecord, Span


def _model(threads: int = 128, diagnostics: list[Diagnostic] | None = None, lowered: bool = True) -> KernelModel:
    return KernelModel(
        kernel="k",
        args={},
        target="sm_90",
        buffers=[],
        launch=Launch(grid=[1], threads=threads, threads_after_ws=threads, span=Span(7)),
        layouts=[],
        pipelines=[],
        warp_specialized=False,
        shared_bytes=0,
        passes=[PassRecord(0, "tl.LayoutInference", "tile-planning", 1.0, True)] if lowered else [],
        diagnostics=diagnostics or [],
    )


def test_a_block_over_1024_threads_cannot_launch_and_points_at_the_kernel_launch() -> None:
    assert fit(_model(threads=2048)) == ("exceeds-threads", "2048 threads per block, over the limit of 1024", 7)
    assert fit(_model(threads=1024)) == ("fits", None, None)


def test_shared_memory_overflow_outranks_other_errors_and_spills_are_named() -> None:
    overflow = Diagnostic("error", "needs 300000 bytes", Span(12), "shared-memory-overflow")
    other = Diagnostic("error", "layout conflict", Span(9), "layout-inference")
    assert fit(_model(diagnostics=[other, overflow])) == ("exceeds-shared-memory", "needs 300000 bytes", 12)
    assert fit(_model(diagnostics=[other])) == ("fails", "layout conflict", 9)
    spill = Diagnostic("warning", "spills 64 bytes", Span(3), "ptxas-spill")
    assert fit(_model(diagnostics=[spill]))[0] == "spills"
    missing = Diagnostic("warning", "needs values for M", Span(2), "missing-args")
    assert fit(_model(diagnostics=[missing], lowered=False)) == ("not-lowered", "needs values for M", 2)


def test_the_summary_counts_each_verdict_in_a_fixed_order() -> None:
    statuses = ["exceeds-shared-memory", "fits", "fits", "not-lowered"]
    assert summary(statuses) == "4 configs: 2 fit, 1 exceeds shared memory, 1 not lowered"  # type: ignore[arg-type]
    assert summary(["fits"]) == "1 config: 1 fits"

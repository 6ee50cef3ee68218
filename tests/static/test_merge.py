"""Which compiled facts and diagnostics replace static ones, and when compiled facts go stale."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.ide import CompiledSnapshot, facts, fingerprints, merged_diagnostics, with_unchanged
from tilescope.core.ide.hints import inlay_hints
from tilescope.core.model import Diagnostic, FileAnalysis, KernelModel, KernelRef, Launch, PassRecord, Span
from tilescope.core.static import analyze_source

FIXTURES = Path(__file__).resolve().parents[1] / "lsp" / "fixtures"
GEMM = (Path(__file__).resolve().parents[2] / "examples" / "gemm.py").read_text()


def model(name: str, **changes: object) -> KernelModel:
    fields: dict[str, object] = {
        "kernel": name,
        "args": {},
        "target": "sm_90",
        "buffers": [],
        "launch": Launch(grid=[8, 8], threads=128, threads_after_ws=256),
        "layouts": [],
        "pipelines": [],
        "warp_specialized": True,
        "shared_bytes": 65536,
        "passes": [PassRecord(0, "tl.LayoutInference", "tile-lowering", 1.0, True)],  # it lowered
    }
    fields.update(changes)
    return KernelModel(**fields)  # type: ignore[arg-type]


def test_a_compiler_error_replaces_the_static_error_on_its_line() -> None:
    static = analyze_source((FIXTURES / "wrong_gemm.py").read_text())
    failure = Diagnostic(
        "error", "Building kernel 'matmul' failed: T.gemm K shape check failed", Span(18), "build-error"
    )
    found = merged_diagnostics(static, FileAnalysis("wrong_gemm.py", "sm_90", [], [], [failure]))
    assert [(d.code, d.source) for d in found] == [("build-error", "tilescope")]


def test_shared_memory_estimates_give_way_to_a_built_kernel() -> None:
    static = analyze_source((FIXTURES / "budgets.py").read_text())
    assert "shared-memory" in [d.code for d in static.diagnostics]
    compiled = FileAnalysis("budgets.py", "sm_90", [model("too_much_shared")], [], [])
    assert "shared-memory" not in [d.code for d in merged_diagnostics(static, compiled)]


def test_a_kernel_that_was_not_lowered_leaves_the_static_estimates() -> None:
    static = analyze_source((FIXTURES / "budgets.py").read_text())
    compiled = FileAnalysis("budgets.py", "sm_90", [model("too_much_shared", passes=[])], [], [])
    assert "shared-memory" in [d.code for d in merged_diagnostics(static, compiled)]


def test_compiled_facts_apply_only_while_the_kernel_text_is_unchanged() -> None:
    static = analyze_source(GEMM)
    snapshot = CompiledSnapshot(
        FileAnalysis("gemm.py", "sm_90", [model("matmul")], [], []), fingerprints(static, GEMM), 1
    )
    launch = [h.label for h in inlay_hints(facts(static, fingerprints(static, GEMM), snapshot)) if h.kind == "launch"]
    assert launch == ["grid 8×8 · 128 threads (256 with producers) · 64 KB shared"]
    edited = GEMM.replace("threads=128", "threads=256")
    moved_on = analyze_source(edited)
    launch = [
        h.label for h in inlay_hints(facts(moved_on, fingerprints(moved_on, edited), snapshot)) if h.kind == "launch"
    ]
    assert launch == ["grid 8×8 · 256 threads · 48 KB shared"]


def test_edits_outside_a_kernel_keep_its_compiled_facts() -> None:
    static = analyze_source(GEMM)
    snapshot = CompiledSnapshot(
        FileAnalysis("gemm.py", "sm_90", [model("matmul")], [], []), fingerprints(static, GEMM), 1
    )
    edited = GEMM.replace('print("ok")', 'print("done")')
    moved_on = analyze_source(edited)
    assert facts(moved_on, fingerprints(moved_on, edited), snapshot).models.keys() == {"matmul"}


def test_an_analysis_so_far_keeps_the_last_models_of_the_unchanged_kernels_it_has_not_reached() -> None:
    refs = [KernelRef(name, "factory", Span(line)) for name, line in (("a", 1), ("b", 10), ("c", 20))]
    before = {"a": "a1", "b": "b1", "c": "c1"}
    last = CompiledSnapshot(
        FileAnalysis("f.py", "sm_90", [model(n, shared_bytes=1) for n in "abc"], refs, []), before, 1
    )
    now = {"a": "a2", "b": "b1", "c": "c2"}  # a and c edited, b unchanged
    so_far = CompiledSnapshot(
        FileAnalysis("f.py", "sm_90", [model("a", shared_bytes=2)], refs, []), now, 2, partial=True
    )
    merged = with_unchanged(so_far, last)
    assert [(m.kernel, m.shared_bytes) for m in merged.analysis.kernels] == [("a", 2), ("b", 1)]
    assert merged.partial and merged.version == 2 and merged.fingerprints == now
    assert with_unchanged(so_far, None) is so_far

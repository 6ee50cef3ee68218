"""Discovery and argument resolution read source only: every kernel style, every argument source."""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.compiler.discovery import discover, instantiations, syntax_diagnostic

from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures"


def _only(source: str):
    (inst,) = instantiations(source, "k.py")
    return inst


def test_every_example_style_is_found_with_its_span() -> None:
    found = {
        ref.name: (ref.style, ref.span.line) for f in sorted(EXAMPLES.glob("*.py")) for ref in discover(f.read_text())
    }
    assert found == {
        "dequant_gemm": ("factory", 13),
        "elementwise_add": ("jit-factory", 8),
        "flash_attention": ("jit-eager", 13),
        "matmul": ("factory", 8),
        "softmax": ("factory", 9),
    }


def test_module_level_prim_func_needs_no_arguments() -> None:
    inst = _only((FIXTURES / "module_prim_func.py").read_text())
    assert (inst.kernel.style, inst.args, inst.missing) == ("prim_func", {}, [])


def test_eager_kernel_parameters_are_its_constants_and_non_tensor_arguments() -> None:
    (ref,) = discover((EXAMPLES / "flash_attention.py").read_text())
    assert [p.name for p in ref.params] == [
        "batch",
        "heads",
        "seq_len",
        "dim",
        "sm_scale",
        "block_M",
        "block_N",
        "num_stages",
    ]


def test_directive_wins_over_call_and_default() -> None:
    inst = _only(
        "import tilelang.language as T\n"
        "# tilescope: M=64 target=sm_80\n"
        "def k(M, N=8):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), 'float32')):\n"
        "        pass\n"
        "    return main\n"
        "k(32, 16)\n"
    )
    assert inst.args == {"M": 64, "N": 16}
    assert inst.sources == {"M": "directive", "N": "call"}
    assert inst.target == "sm_80"


def test_call_site_arguments_resolve_through_main_defaults_and_locals() -> None:
    inst = _only((FIXTURES / "main_call.py").read_text())
    assert inst.args == {"N": 4096, "alpha": 2.0, "block_N": 256}
    assert inst.sources["N"] == "call"


def test_argparse_defaults_feed_call_sites() -> None:
    inst = _only((EXAMPLES / "softmax.py").read_text())
    assert inst.args == {"M": 4096, "N": 256}


def test_positional_call_maps_to_parameters_in_order() -> None:
    inst = _only(
        "import tilelang.language as T\n"
        "def k(M, N, block=4):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M, N), 'float32')):\n"
        "        pass\n"
        "    return main\n"
        "SIZE = 1 << 10\n"
        "kernel = k(SIZE, SIZE * 2)\n"
    )
    assert inst.args == {"M": 1024, "N": 2048}
    assert inst.missing == []


def test_missing_parameters_are_named() -> None:
    inst = _only((FIXTURES / "needs_args.py").read_text())
    assert inst.missing == ["N", "factor"]


def test_calls_with_unknown_values_do_not_invent_arguments() -> None:
    inst = _only(
        "import tilelang.language as T\n"
        "def k(M):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((M,), 'float32')):\n"
        "        pass\n"
        "    return main\n"
        "def run(x):\n"
        "    return k(x.shape[0])\n"
    )
    assert inst.missing == ["M"]


def test_syntax_error_is_reported_at_its_line_and_discovers_nothing() -> None:
    source = (FIXTURES / "syntax_error.py").read_text()
    diagnostic = syntax_diagnostic(source)
    assert diagnostic is not None and diagnostic.span.line == 13 and diagnostic.code == "syntax-error"
    assert discover(source) == []


def test_the_editors_static_analysis_is_handed_over_not_computed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The language server holds the static analysis of the text it sends; discovery takes it."""
    from tilescope.core.compiler import discovery
    from tilescope.core.static import analyze_source

    path = str(EXAMPLES / "gemm.py")
    source = (EXAMPLES / "gemm.py").read_text()
    held = analyze_source(source, path)
    expected = discovery.instantiations(source, path)

    def again(*_: object) -> None:
        raise AssertionError("the static tier ran a second time")

    monkeypatch.setattr(discovery, "analyze_source", again)
    assert discovery.instantiations(source, path, static=held) == expected

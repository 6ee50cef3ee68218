"""Each static error about Ascend code fires exactly where plain TileLang 0.1.15 refuses the code.

A tiny vector-add kernel in the Ascend dialect lowers with plain TileLang for ``ascend`` on this CPU
(``with tvm.target.Target("ascend") as t: tilelang.lower(f, target=t)``) and gets no static error;
each twin changes one thing, fails to import, build or lower there, and gets the rule's error at the
line that changed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from tilescope.core.static import analyze_source

TWIN = """import tilelang
import tilelang.ascend.language as T


def kernel(N=4096, block=256):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(N // block) as bx:
            a = T.alloc_shared((block,), "float32")
            b = T.alloc_shared((block,), "float32")
            T.copy(A[bx * block], a)
            T.copy(B[bx * block], b)
            with T.SimtVF(threads=128):
                for i in T.Parallel(block):
                    a[i] = a[i] + b[i]
            T.copy(a, C[bx * block])

    return main
"""
SIMT = """            with T.SimtVF(threads=128):
                for i in T.Parallel(block):
                    a[i] = a[i] + b[i]
"""
CASES = {
    # name: (the text changed, its replacement, the error's code, words it says, a text of the line it is at)
    "plain-language": ("import tilelang.ascend.language as T", "import tilelang.language as T",
                       "dialect-primitive", "has it in tilelang.ascend.language", "T.SimtVF("),
    "import": ("import tilelang\n", "import tilelang\nfrom tilelang.language import simd\n",
               "dialect-primitive", "ImportError", "from tilelang.language import simd"),
    "absent": ("a[i] = a[i] + b[i]", "a[i] = T.vmi.vadd(a[i], b[i])", "dialect-primitive",
               "nor in any other language module", "T.vmi"),
    "threads": ("T.Kernel(N // block)", "T.Kernel(N // block, threads=128)", "ascend-launch", "no threads=",
                "T.Kernel("),
    "grid": ("T.Kernel(N // block) as bx", "T.Kernel(N // block, 1) as (bx, by)", "ascend-launch",
             "one grid extent", "T.Kernel("),
    "parallel": ("with T.SimtVF(threads=128):", "if True:", "ascend-vector-region", "outside a vector region",
                 "T.Parallel("),
    "cast": ('b = T.alloc_shared((block,), "float32")', 'b = T.alloc_shared((block,), "float16")',
             "ascend-vector-region", "cannot convert dtypes", "T.copy(B["),
    "simd-member": ("a[i] = a[i] + b[i]", "a[i] = T.simd.vaddd(a[i], b[i])", "dialect-primitive",
                    "did you mean T.simd.vadd?", "T.simd.vaddd"),
    "global": (SIMT, "            with T.SimdVF():\n                T.copy(A[bx * block], b)\n",
               "ascend-vector-region", "inside T.SimdVF", "T.copy(A[bx * block], b)\n"),
}  # fmt: skip


def _source(case: str | None) -> str:
    if case is None:
        return TWIN
    old, new = CASES[case][:2]
    assert old in TWIN
    return TWIN.replace(old, new, 1)


def _plain_lowering(path: Path) -> BaseException | None:
    """What plain TileLang does with the file: ``None`` when it lowers for ``ascend``, else the exception."""
    import tilelang
    from tilelang import tvm

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        with tvm.target.Target("ascend") as target:
            tilelang.lower(module.kernel(), target=target)
    except Exception as error:
        return error
    finally:
        sys.modules.pop(path.stem, None)
    return None


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> dict[str | None, BaseException | None]:
    pytest.importorskip("tilelang.ascend.language")
    folder = tmp_path_factory.mktemp("ascend_twins")
    found: dict[str | None, BaseException | None] = {}
    for index, case in enumerate([None, *CASES]):
        path = folder / f"ascend_twin_{index}.py"
        path.write_text(_source(case))
        found[case] = _plain_lowering(path)
    return found


def _errors(source: str) -> list[tuple[str, int, str]]:
    static = analyze_source(source, "twin.py")
    return [(d.code, d.span.line, d.message) for d in static.diagnostics if d.severity == "error"]


def test_the_twin_lowers_and_has_no_static_error(plain: dict[str | None, BaseException | None]) -> None:
    assert plain[None] is None
    assert _errors(TWIN) == []


@pytest.mark.parametrize("case", list(CASES))
def test_the_rule_fires_where_plain_tilelang_refuses(case: str, plain: dict[str | None, BaseException | None]) -> None:
    assert plain[case] is not None, f"plain TileLang accepts the {case} twin: the rule would be a false error"
    source = _source(case)
    _, _, code, words, marker = CASES[case]
    line = next(i for i, text in enumerate(source.splitlines(keepends=True), 1) if marker.strip() in text)
    errors = _errors(source)
    assert [(c, n) for c, n, _ in errors] == [(code, line)], errors
    assert words in errors[0][2]


def test_a_release_without_the_dialect_gets_notes_not_errors() -> None:
    """An older TileLang (its catalog without ``tilelang.ascend.language``): nothing is claimed about
    what the dialect lacks, since the release does not say."""
    from tilescope.core.static import catalog

    current = catalog.default()
    older = catalog.Catalog(current.version, current.table)
    static = analyze_source(TWIN.replace("block)\n", "block)\n            T.vmi.vadd(a, b)\n", 1), table=older)
    assert [d for d in static.diagnostics if d.severity == "error"] == []
    assert any(d.code == "unknown-primitive" and "tilelang.ascend.language" in d.message for d in static.diagnostics), (
        static.diagnostics
    )

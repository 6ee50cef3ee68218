"""The shipped ``tilelang.language`` catalog matches the TileLang that is installed."""

from __future__ import annotations

from tilescope.core.static import catalog


def test_catalog_was_taken_from_the_installed_tilelang() -> None:
    import tilelang
    import tilelang.language as language

    assert catalog.tilelang_version() == tilelang.__version__
    public = {name for name in dir(language) if not name.startswith("_")}
    assert set(catalog.primitives()) == public


def test_catalog_keeps_signatures_and_docstrings() -> None:
    gemm = catalog.lookup("gemm")
    assert gemm is not None and gemm.kind == "function"
    assert [p.name for p in gemm.params or ()][:5] == ["A", "B", "C", "transpose_A", "transpose_B"]
    assert gemm.doc.startswith("TileLang GEMM operator")
    assert catalog.lookup("float16").kind == "dtype"

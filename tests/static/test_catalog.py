"""The catalog is read from a TileLang release's sources, without importing it, and says what
the imported ``tilelang.language`` says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.static import catalog
from tilescope.core.static.catalog_source import read_catalog


@pytest.fixture(scope="module")
def package() -> Path:
    found = catalog.installed_package()
    if found is None:
        pytest.skip("no TileLang installed")
    return found


def test_reading_the_sources_imports_nothing(package: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from tilescope.core.static.catalog_source import read_catalog; "
        f"data = read_catalog(Path({str(package)!r})); "
        "print(len(data['names']), 'tilelang' in sys.modules, 'tvm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert int(out[0]) > 700 and out[1:] == ["False", "False"]


def test_names_and_signatures_agree_with_the_imported_module(package: Path) -> None:
    import inspect

    import tilelang.language as language

    table = catalog.catalog_for(package)
    public = {name for name in dir(language) if not name.startswith("_")}
    missing = public - set(table.table)
    assert len(missing) <= 0.01 * len(public), sorted(missing)
    for name in ("gemm", "copy", "fill", "clear", "alloc_shared", "Pipelined", "reduce_max", "atomic_add"):
        expected = [p.name for p in inspect.signature(getattr(language, name)).parameters.values()]
        found = table.lookup(name)
        assert found is not None and [p.name for p in found.params or ()] == expected, name
    assert table.lookup("clear").doc.startswith("Clear a buffer by filling it with zeros")
    assert table.lookup("float16").kind == "dtype"


def test_shipped_catalog_is_the_installed_release_read_the_same_way(package: Path) -> None:
    assert json.loads(catalog.SHIPPED.read_text()) == read_catalog(package)


def test_catalog_is_cached_per_release_on_disk(package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(catalog, "_loaded", {})
    first = catalog.catalog_for(package)
    (cached,) = tmp_path.glob("catalog-*.json")
    assert cached.name.startswith(f"catalog-{first.version}-")
    monkeypatch.setattr(catalog, "_loaded", {})
    assert catalog.catalog_for(package).table == first.table


def test_a_worker_is_given_its_releases_cached_catalog_and_nothing_else(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compiler worker's cache folder gets the one catalog file its interpreter's TileLang needs (else it reads
    TileLang's sources again at every start); other files of the user's cache stay out."""
    user = tmp_path / "user-cache"
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(user))
    monkeypatch.setattr(catalog, "_loaded", {})
    catalog.catalog_for(package)
    (user / "dry-runs").mkdir()
    (user / "dry-runs" / "another-project.json").write_text("{}")
    worker = catalog.seed(sys.executable, tmp_path / "worker-cache")
    (cached,) = user.glob("catalog-*.json")
    assert sorted(p.name for p in worker.iterdir()) == [cached.name]
    assert (worker / cached.name).read_bytes() == cached.read_bytes()
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(worker))
    monkeypatch.setattr(catalog, "_loaded", {})
    monkeypatch.setattr(catalog, "read_catalog", lambda _package: pytest.fail("the seeded catalog was read again"))
    assert catalog.catalog_for(package).version == catalog.release_version(package)


def test_the_ascend_dialect_is_what_the_imported_module_has(package: Path) -> None:
    import inspect

    import tilelang.ascend.language as ascend

    table = catalog.catalog_for(package).dialect("ascend")
    assert table.module == "tilelang.ascend.language"
    public = {name for name in dir(ascend) if not name.startswith("_")}
    assert sorted(public - set(table.table)) == []
    for name in ("alloc_l1", "alloc_l0a", "alloc_l0c", "alloc_shared", "SimtVF", "SimdVF", "dual_copy", "Kernel"):
        expected = [p.name for p in inspect.signature(getattr(ascend, name)).parameters.values()]
        found = table.lookup(name)
        assert found is not None and [p.name for p in found.params or ()] == expected, name
    assert table.scopes["alloc_l1"] == "shared.l1" and table.scopes["alloc_l0c"] == "shared.l0c"
    assert table.lookup("alloc_tmem") is None and catalog.catalog_for(package).lookup("SimtVF") is None
    assert catalog.catalog_for(package).homes("SimtVF") == ["tilelang.ascend.language"]

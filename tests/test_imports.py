"""Every module imports on its own, and the package graph has no import cycle.

A cycle that works only because of the order modules happen to be imported in breaks as soon as
someone imports the other end first; this walks every module of every installed package, imports
each one first in a clean ``tilescope`` namespace, and checks the graph of imports (module level
and inside functions alike; ``if TYPE_CHECKING:`` blocks excepted, since they never run).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def packages() -> list[str]:
    """The packages pyproject.toml installs (``[tool.setuptools] packages``)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    listed = re.search(r"^packages = \[(.*?)\]", text, re.S | re.M)
    assert listed, "pyproject.toml lists no packages"
    return re.findall(r'"([\w.]+)"', listed.group(1))


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    return Path(next(iter(spec.submodule_search_locations)))


def modules() -> dict[str, Path]:
    """Every module of every package, by dotted name (``__main__`` modules, which run on import, left out)."""
    found: dict[str, Path] = {}
    for package in packages():
        for path in sorted(package_dir(package).glob("*.py")):
            if path.stem == "__main__":
                continue
            found[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return found


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def import_statements(path: Path) -> Iterator[ast.Import | ast.ImportFrom]:
    """The absolute import statements of ``path`` that run, wherever they sit (``TYPE_CHECKING`` blocks left out)."""

    def visit(nodes: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
        for node in nodes:
            if isinstance(node, ast.If) and _type_checking(node):
                yield from visit(node.orelse)
                continue
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
                yield node
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from visit([child])
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    yield from visit(child.body)

    yield from visit(ast.parse(path.read_text(encoding="utf-8")).body)


def imports(path: Path, known: Mapping[str, Path]) -> set[str]:
    """The project modules ``path`` imports when it runs, wherever the import statement sits."""
    found: set[str] = set()
    for node in import_statements(path):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in known)
            continue
        for alias in node.names:
            full = f"{node.module}.{alias.name}"
            if full in known:
                found.add(full)
            elif node.module in known:
                found.add(node.module)
    return found


def written(path: Path) -> set[str]:
    """The modules ``path`` imports, as written: ``from a.b import c`` names ``a.b``, so that an
    import through a package's own names is told apart from one that reaches past them."""
    return {
        name
        for node in import_statements(path)
        for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
    }


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(start: str) -> None:
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


LAZY = "def f():\n    try:\n        pass\n    except ImportError:\n        from c import x\n"


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text(LAZY)
    (tmp_path / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b\nimport a\n")
    (tmp_path / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n")
    known = {p.stem: p for p in tmp_path.glob("*.py")}
    graph = {name: imports(path, known) for name, path in known.items()}
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_every_package_directory_is_installed():
    listed = set(packages())
    for package in packages():
        for child in package_dir(package).iterdir():
            if (child / "__init__.py").is_file():
                assert f"{package}.{child.name}" in listed, f"{child} is a package missing from pyproject.toml"


def test_no_import_cycle_in_the_package_graph():
    known = modules()
    graph = {name: imports(path, known) - {name} for name, path in known.items()}
    assert cycles(graph) == []


@pytest.mark.slow
def test_every_module_imports_on_its_own():
    names = sorted(modules())
    script = (
        "import importlib, sys, traceback\n"
        "failed = []\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'tilescope' or m.startswith('tilescope.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception:\n"
        "        failed.append(name + ': ' + traceback.format_exc(limit=-3))\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# Allowed arrows: which layer may import which. The core computes every fact; the static tier reads
# source only; the editor layer and its front ends draw views and never load TileLang.

COMPILER_TIER = {
    f"tilescope.core.{name}"
    for name in (
        "analysis",
        "autotune",
        "extract",
        "ir_text",
        "launch_records",
        "loader",
        "lowering",
        "service",
        "worker",
        "worker_link",
        "compat",
    )
}
"""Modules that run (or talk to the process that runs) the compiler."""
FRONT_ENDS = ("tilescope.lsp", "tilescope.visualizer")
FRONT_END_MAY_IMPORT = ("tilescope.core.ide", "tilescope.core.model", "tilescope.core.static")
"""The editor layer's door, the model and the static tier's public names (its package, not its modules)."""
COMMAND_PLUMBING = ("tilescope.core.check_cmd", "tilescope.core.kernel_options", "tilescope.core.terminal")
"""Command-line options and terminal conventions shared by every ``tilescope`` command, which the
visualizer's commands take too."""
TILELANG = ("tilelang", "tvm")


def _under(name: str, roots: tuple[str, ...] | set[str]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def arrows() -> dict[str, set[str]]:
    return {name: written(path) for name, path in modules().items()}


def test_the_core_never_imports_a_front_end_or_the_puzzles():
    wrong = {
        name: sorted(n for n in found if _under(n, (*FRONT_ENDS, "tilescope.mcp", "tilescope.puzzles")))
        for name, found in arrows().items()
        if _under(name, ("tilescope.core",))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_static_tier_never_imports_the_editor_layer_or_the_compiler_tier():
    forbidden = {"tilescope.core.ide", *COMPILER_TIER}
    wrong = {
        name: sorted(n for n in found if _under(n, forbidden) or _under(n, TILELANG))
        for name, found in arrows().items()
        if _under(name, ("tilescope.core.static",))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_front_ends_import_the_core_only_through_its_doors():
    wrong: dict[str, list[str]] = {}
    for name, found in arrows().items():
        if not _under(name, FRONT_ENDS):
            continue
        allowed = FRONT_END_MAY_IMPORT + (COMMAND_PLUMBING if name.startswith("tilescope.visualizer.") else ())
        through_static = [n for n in found if _under(n, ("tilescope.core.static",)) and n != "tilescope.core.static"]
        outside = [
            n
            for n in found
            if _under(n, ("tilescope.core",))
            and n != "tilescope.core"
            and not (n in allowed or _under(n, ("tilescope.core.model",)) or n == "tilescope.core.ide")
        ]
        if through_static or outside or "tilescope.core" in found:
            wrong[name] = sorted({*through_static, *outside} | ({"tilescope.core"} & found))
    assert wrong == {}


def test_views_never_import_tilelang():
    """Neither the editor layer nor a front end, nor anything they import in turn, loads TileLang."""
    known = modules()
    graph = {name: imports(path, known) - {name} for name, path in known.items()}
    loads = {name for name, found in arrows().items() if any(_under(n, TILELANG) for n in found)}
    views = [n for n in known if _under(n, ("tilescope.core.ide", *FRONT_ENDS))]
    wrong: dict[str, list[str]] = {}
    for view in views:
        seen, todo = {view}, [view]
        while todo:
            for target in graph[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        if seen & loads:
            wrong[view] = sorted(seen & loads)
    assert wrong == {}


def test_the_type_checker_resolves_each_package_to_its_folder():
    """``typings/`` mirrors ``[tool.setuptools.package-dir]``, so pyright and Pylance read the checkout."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(r"^\[tool\.setuptools\.package-dir\]\n(.*?)(?=^\[)", text, re.S | re.M)
    assert table, "pyproject.toml maps no package folders"
    mapping = dict(re.findall(r'^"?([\w.]+)"?\s*=\s*"([\w./-]+)"', table.group(1), re.M))
    assert mapping["tilescope.core"] == "tilelang_core"
    for package, folder in mapping.items():
        seen = ROOT / "typings" / Path(*package.split("."))
        if package == "tilescope":
            seen = seen / "__init__.py"
            folder = f"{folder}/__init__.py"
        assert seen.resolve() == (ROOT / folder).resolve(), f"typings/ does not map {package} to {folder}"

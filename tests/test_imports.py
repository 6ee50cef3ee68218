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


def imports(path: Path, known: Mapping[str, Path]) -> set[str]:
    """The project modules ``path`` imports when it runs, wherever the import statement sits."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _type_checking(node):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name in known)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in known:
                        found.add(full)
                    elif node.module in known:
                        found.add(node.module)
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child])
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    visit(child.body)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


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

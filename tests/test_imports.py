"""Every module imports on its own, and the package graph has no import cycle.

A cycle that works only because of the order modules happen to be imported in breaks as soon as
someone imports the other end first; this walks every module of every installed package, imports
each one first in a clean ``tilescope`` namespace, and checks the graph of imports (module level
and inside functions alike; ``if TYPE_CHECKING:`` blocks excepted, since they never run).
"""

from __future__ import annotations

import ast
import functools
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


SCRIPTS = {"tilescope.puzzles.server.migrations.env"}
"""Modules that are scripts another program runs (Alembic runs its ``env.py`` inside a migration)."""


def modules() -> dict[str, Path]:
    """Every module of every package, by dotted name (``__main__`` modules and ``SCRIPTS``, which run on import,
    left out)."""
    found: dict[str, Path] = {}
    for package in packages():
        for path in sorted(package_dir(package).glob("*.py")):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            if path.stem != "__main__" and name not in SCRIPTS:
                found[name] = path
    return found


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def import_statements(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The absolute import statements of ``path`` that run, wherever they sit (``TYPE_CHECKING`` blocks left out).
    Each file is read once per version: resolving a name follows re-exports through the same few modules
    thousands of times."""
    info = path.stat()
    return _import_statements(path, info.st_mtime_ns, info.st_size)


@functools.cache
def _import_statements(path: Path, _mtime_ns: int, _size: int) -> tuple[ast.Import | ast.ImportFrom, ...]:

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

    return tuple(visit(ast.parse(path.read_text(encoding="utf-8")).body))


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


# Allowed arrows. Every module belongs to the longest room in ``LAYERS`` that holds it; it may import
# the rooms its row names (its own room always). An import is judged by the module that *defines* the
# name it takes: ``from tilescope.core.ide import Analyzer`` resolves through ``ide/__init__``'s own
# import to ``compiler.service``, so a re-export cannot launder an arrow.

CORE = "tilescope.core"
GROUND = CORE
"""The ground floor: the modules at the top of ``tilescope.core`` (plain records, pure functions)."""

LAYERS: dict[str, tuple[str, ...]] = {
    GROUND: (),
    f"{CORE}.compat": (GROUND, f"{CORE}.static"),
    f"{CORE}.perf": (GROUND,),
    f"{CORE}.sandbox": (),
    f"{CORE}.static": (GROUND, f"{CORE}.record"),
    f"{CORE}.record": (GROUND, f"{CORE}.sandbox"),
    f"{CORE}.ide": (GROUND, f"{CORE}.static", f"{CORE}.perf"),
    f"{CORE}.compiler": (GROUND, f"{CORE}.sandbox", f"{CORE}.record", f"{CORE}.static", f"{CORE}.perf"),
    f"{CORE}.worker": (
        GROUND,
        f"{CORE}.compat",
        f"{CORE}.perf",
        f"{CORE}.record",
        f"{CORE}.static",
        f"{CORE}.interpret",
        f"{CORE}.compiler.discovery",
        f"{CORE}.sandbox.frames",
        f"{CORE}.sandbox.landlock",  # the zygote puts each child it forks in a domain of its own
    ),
    f"{CORE}.interpret": (
        GROUND,
        f"{CORE}.compat",
        f"{CORE}.perf",
        f"{CORE}.static",
        f"{CORE}.worker",
        f"{CORE}.compiler.discovery",
    ),
    f"{CORE}.cli": (
        GROUND,
        f"{CORE}.compat.releases",
        f"{CORE}.compiler",
        f"{CORE}.record",
        f"{CORE}.perf",
        f"{CORE}.static",
        f"{CORE}.ide",
        f"{CORE}.sandbox",
    ),
    "tilescope.lsp": (GROUND, f"{CORE}.ide", f"{CORE}.static", f"{CORE}.compiler.service", f"{CORE}.sandbox"),
    "tilescope.visualizer": (
        GROUND,
        f"{CORE}.ide",
        f"{CORE}.static",
        f"{CORE}.compiler.service",
        f"{CORE}.cli.kernel_options",
        f"{CORE}.cli.terminal",
        f"{CORE}.cli.check_cmd",
    ),
    "tilescope.mcp": (
        GROUND,
        f"{CORE}.ide",
        f"{CORE}.static",
        f"{CORE}.compiler",
        f"{CORE}.perf",
        f"{CORE}.sandbox",
        "tilescope.puzzles",
    ),
    "tilescope.puzzles": (
        GROUND,
        f"{CORE}.compiler",
        f"{CORE}.sandbox",
        f"{CORE}.worker",
        f"{CORE}.interpret",
        f"{CORE}.static",
        f"{CORE}.perf",
        f"{CORE}.ide",
    ),
    "tilescope": (),
}
"""Each room and the rooms it may import. The core's rooms never import a front end or the puzzles;
the views (``ide``, the language server, the visualizer) never reach TileLang (see below)."""
TILELANG_ROOMS = (
    f"{CORE}.worker",
    f"{CORE}.compat",
    f"{CORE}.interpret",
    f"{CORE}.record.dry_run_standin",
    "tilescope.puzzles.builder",
    "tilescope.puzzles.loader_zygote",
    "tilescope.puzzles.executor",
    "tilescope.puzzles.runner",
)
"""The only modules that may import TileLang or TVM: the worker's rooms, and the modules that run in a
process that already has it (the dry run's stand-in, inside the user's program; the puzzle grader's
loader, warm loader and kernel processes)."""
FRONT_ENDS = ("tilescope.lsp", "tilescope.visualizer", "tilescope.mcp")
TILELANG = ("tilelang", "tvm")


def _under(name: str, roots: tuple[str, ...] | set[str]) -> bool:
    return any(name == root or name.startswith(root + ".") for root in roots)


def room_of(module: str, layers: Mapping[str, tuple[str, ...]] = LAYERS) -> str:
    """The room a module lives in: the longest ``layers`` key above it, the ground floor for a module
    at the top of the core."""
    return max((room for room in layers if _under(module, (room,))), key=len)


def resolve(module: str, name: str, known: Mapping[str, Path], seen: frozenset[str] = frozenset()) -> str:
    """The module that defines ``name`` as ``from module import name`` sees it: a submodule, or the
    module that ``module`` itself imported ``name`` from (followed to its end), or ``module``."""
    if f"{module}.{name}" in known:
        return f"{module}.{name}"
    path = known.get(module)
    if path is None or module in seen:
        return module
    for node in import_statements(path):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return resolve(node.module, alias.name, known, seen | {module})
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == name:
                    return alias.name
    return module


def arrows(known: Mapping[str, Path]) -> dict[str, set[str]]:
    """Each module's imports, as the modules that define what it takes (project and external alike)."""
    found: dict[str, set[str]] = {}
    for module, path in known.items():
        targets: set[str] = set()
        for node in import_statements(path):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            else:
                assert node.module is not None
                targets.update(resolve(node.module, alias.name, known) for alias in node.names)
        found[module] = targets
    return found


def violations(known: Mapping[str, Path], layers: Mapping[str, tuple[str, ...]] = LAYERS) -> dict[str, list[str]]:
    """Every import a room's row does not allow, by importing module."""
    wrong: dict[str, list[str]] = {}
    for module, targets in arrows(known).items():
        room = room_of(module, layers)
        allowed = (room, *layers[room])
        bad = sorted(
            target
            for target in targets
            if _under(target, ("tilescope",))
            and not (
                any(_under(target, (a,)) for a in allowed if a != GROUND)
                or (GROUND in allowed and room_of(target, layers) == GROUND)
            )
        )
        bad += sorted(t for t in targets if _under(t, TILELANG) and not _under(module, TILELANG_ROOMS))
        if bad:
            wrong[module] = bad
    return wrong


def test_every_module_imports_only_what_its_room_allows():
    assert violations(modules()) == {}


def test_front_ends_enter_the_editor_layer_by_its_door():
    """The language server, the visualizer and the MCP server take editor views from ``tilescope.core.ide``
    itself, as written, never from a module behind it: the modules behind the door stay free to move."""
    wrong = {
        name: sorted(n for n in written(path) if _under(n, (f"{CORE}.ide",)) and n != f"{CORE}.ide")
        for name, path in modules().items()
        if _under(name, FRONT_ENDS)
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def test_a_re_export_cannot_launder_an_arrow(tmp_path):
    """A front end that takes the compiler host through the editor layer's door is still caught."""
    files = {
        "tilescope.core.compiler.service": "class Analyzer: ...\n",
        "tilescope.core.ide": "from tilescope.core.compiler.service import Analyzer\n",
        "tilescope.visualizer.app": "from tilescope.core.ide import Analyzer\n",
        "tilescope.visualizer.ok": "from tilescope.core.compiler.service import Analyzer\n",
    }
    known = _planted(tmp_path, files)
    layers = {**LAYERS, "tilescope.core.ide": (GROUND,), "tilescope.visualizer": ("tilescope.core.ide",)}
    assert violations(known, layers) == {
        "tilescope.core.ide": ["tilescope.core.compiler.service"],
        "tilescope.visualizer.app": ["tilescope.core.compiler.service"],
        "tilescope.visualizer.ok": ["tilescope.core.compiler.service"],
    }


def test_the_mcp_server_never_imports_a_command_module(tmp_path):
    files = {
        "tilescope.core.cli.profile_cmd": "def profile_file(): ...\n",
        "tilescope.core.compiler.service": "class Analyzer: ...\n",
        "tilescope.mcp.tools": (
            "from tilescope.core.compiler.service import Analyzer\n"
            "def profile():\n    from tilescope.core.cli.profile_cmd import profile_file\n"
        ),
    }
    assert violations(_planted(tmp_path, files)) == {"tilescope.mcp.tools": ["tilescope.core.cli.profile_cmd"]}


def test_only_the_worker_rooms_import_tilelang(tmp_path):
    files = {"tilescope.core.compiler.batch": "import tvm\n", "tilescope.core.worker.lower": "import tilelang\n"}
    assert violations(_planted(tmp_path, files)) == {"tilescope.core.compiler.batch": ["tvm"]}


def _planted(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    known: dict[str, Path] = {}
    for module, text in files.items():
        path = root / f"{module}.py"
        path.write_text(text, encoding="utf-8")
        known[module] = path
    return known


def test_the_core_top_level_is_the_ground_floor_alone():
    """At most a dozen modules at the top of the core, each importing only the ground floor."""
    top = sorted(p.stem for p in package_dir(CORE).glob("*.py") if p.stem != "__init__")
    assert len(top) <= 12, top


def test_views_never_import_tilelang():
    """Neither the editor layer nor a front end, nor anything they import in turn, loads TileLang."""
    known = modules()
    graph = {name: imports(path, known) - {name} for name, path in known.items()}
    loads = {name for name, found in arrows(known).items() if any(_under(n, TILELANG) for n in found)}
    views = [n for n in known if _under(n, (f"{CORE}.ide", *FRONT_ENDS))]
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

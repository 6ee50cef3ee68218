"""The dry run: learn a kernel's sizes by running the program that builds it, with nothing compiled.

When the static tier cannot give every argument of a kernel (argparse defaults passed through
``main(args)``, sizes computed from tensors or read from a config), the file's own ``__main__``
runs (``python -m pkg.mod`` inside a package; for a module without one, the first test file of
its project that imports it, under pytest, else the first program there that imports it or its
package) with the record hook, in the supervised child the compiler worker runs in: its memory
limit, CPU seconds, a wall limit and no GPU (``CUDA_VISIBLE_DEVICES=""``). Tensors the program
asks for on the GPU are made on the CPU and every compile returns a stand-in
(``dry_run_standin.py``: outputs of the right shapes, result checks, timings and benchmarks off),
so the program goes on to its later kernels. Kernels an autotuner chose for are left out (it
timed stand-ins).

The first instance of each of the file's own kernels is kept, in the schema of
``.tilescope/instances.json`` (``tilelang_core/SCHEMA.md``) plus ``source_sha256`` and the run's
outcome, in the user's cache folder keyed by the file's hash (and the runner's, and the
interpreter), so an unchanged file runs once. It runs from a scratch folder: the program's
relative writes (plots) land there. Only ``Analyzer(dry_run=True)`` calls it, which ``check`` and
a trusted editor use; nothing here runs for an untrusted workspace.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.core.record.recorder import INSTANCES_VERSION, hook_env, read_lines, wait_for_hook
from tilescope.core.sandbox.spawn import NO_GPU, worker_env
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost

DRY_RUN_VERSION = 1
"""Bumped when what a dry run records changes, so older cached runs are not used."""
WALL_S = 90.0
IDLE_S = 25.0
"""A run that built a kernel and then nothing new for this long is stopped (it is timing or training)."""
_STAND_IN = {"TILESCOPE_RECORD_CPU_TENSORS": "1", "TILESCOPE_RECORD_STAND_IN": "1", "OMP_NUM_THREADS": "1"}
_TEST_NAME = re.compile(r"^(test_.*|.*_test)\.py$")
_MAX_FILES = 5000


@dataclass(frozen=True)
class DryRun:
    """What one dry run of a file saw: per kernel of the file, its first instance (instances.json schema)."""

    file: str
    source_sha256: str
    command: str
    """What ran: ``python -O FILE`` or ``python -O -m pytest TEST``."""
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    stop: str | None = None
    """Why the run ended early: an exception's first line, ``timeout`` or ``idle``; ``None`` at its end."""
    seconds: float = 0.0
    pending: bool = False
    """Started in the background and not finished yet (the editor analyses again when it ends)."""

    def source(self, kernel: str) -> str | None:
        """Where a kernel's values came from, for ``arg_sources`` and hover: ``dry run of main(), line 212``."""
        entry = self.instances.get(kernel)
        if entry is None:
            return None
        called = entry.get("called_at") or {}
        function = called.get("function")
        where = "the module" if function in (None, "<module>") else f"{function}()"
        other = called.get("file") and os.path.abspath(called["file"]) != self.file
        place = f" in {Path(called['file']).name}" if other else ""
        line = f", line {called['line']}" if called.get("line") else ""
        return f"dry run of {where}{place}{line}"

    def instance(self, kernel: str) -> dict[str, Any] | None:
        """The first instance the run built of ``kernel``, as ``instances.json`` holds one: its arguments
        (``record_values``'s form), the ``T.const`` sizes its tensors bound, what could not be recorded."""
        return self.instances.get(kernel)

    def why_not(self, kernel: str) -> str:
        """Why the run gave no values for ``kernel``, for the missing-arguments diagnostic."""
        if self.pending:
            return f"a dry run ({self.command}) is under way to learn them"
        how = f"a dry run ({self.command}) did not build it"
        return f"{how}: it stopped early ({self.stop})" if self.stop else how


def cache_dir() -> Path:
    """``$TILESCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tilescope``, else ``~/.cache/tilescope``."""
    explicit = os.environ.get("TILESCOPE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tilescope"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def has_main(source: str) -> bool:
    """Whether the file has an ``if __name__ == "__main__":`` block."""
    return bool(re.search(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", source, re.MULTILINE))


@dataclass(frozen=True)
class Runner:
    """The program a dry run runs to reach a file's kernels."""

    path: Path
    argv: list[str]
    """After ``python -O``."""
    command: str


def import_root(file: Path) -> Path:
    """The folder ``import pkg.mod`` works from: above the outermost package holding ``file`` (a folder
    without ``__init__.py`` inside a package is a namespace portion of it)."""
    folder = file.parent
    while folder.parent != folder and ((folder / "__init__.py").exists() or (folder.parent / "__init__.py").exists()):
        folder = folder.parent
    return folder


def module_name(file: Path) -> str:
    """``mylib.ops.gemm`` for ``src/mylib/ops/gemm.py``."""
    return ".".join(file.resolve().relative_to(import_root(file)).with_suffix("").parts)


def _main_runner(file: Path) -> Runner:
    """``python -O FILE``, or ``python -O -m pkg.mod`` for a module of a package (its relative imports then
    work); a script in a plain folder runs as a script, its folder first on ``sys.path``."""
    name = module_name(file)
    if (file.parent / "__init__.py").exists() and "." in name:
        return Runner(file, ["-m", name], f"python -O -m {name}")
    return Runner(file, [str(file)], f"python -O {file.name}")


def _project_files(file: Path) -> list[Path]:
    """Python files of the project holding ``file`` (up to its ``pyproject.toml``, ``setup.py`` or ``.git``,
    at most four folders up), virtual environments and hidden folders left out."""
    folder = root = file.parent
    for _ in range(4):
        if any((folder / marker).exists() for marker in ("pyproject.toml", "setup.py", ".git")):
            root = folder
            break
        folder = folder.parent
    found = []
    for candidate in sorted(root.rglob("*.py"))[:_MAX_FILES]:
        parts = candidate.relative_to(root).parts[:-1]
        if not any(p.startswith(".") or "venv" in p or p in ("site-packages", "node_modules") for p in parts):
            found.append(candidate)
    return found


def runner(file: Path, source: str) -> Runner | None:
    """The file's own ``__main__``; else the first test file importing it (pytest); else the first program
    with a ``__main__`` that imports it or a package holding it (``from mylib import matmul``)."""
    if has_main(source):
        return _main_runner(file)
    dotted = module_name(file).split(".")
    names = {".".join(dotted[: i + 1]) for i in range(len(dotted))} | {file.stem}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    imports = re.compile(rf"^\s*(from|import)\s+([\w.]*\.)?({alternatives})(?![\w.])", re.M)
    programs = []
    for candidate in _project_files(file):
        if candidate == file:
            continue
        try:
            text = candidate.read_text(errors="replace")
        except OSError:
            continue
        if not imports.search(text):
            continue
        if _TEST_NAME.match(candidate.name):
            argv = ["-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", str(candidate)]
            return Runner(candidate, argv, f"python -O -m pytest {candidate.name}")
        if has_main(text):
            programs.append(candidate)
    return _main_runner(programs[0]) if programs else None


@dataclass(frozen=True)
class Planned:
    """A dry run ready to start: what runs, the hash its result is valid for, where it is cached."""

    file: Path
    runner: Runner
    digest: str
    cached: Path


def plan(path: str, python: str) -> Planned | None:
    """What a dry run of the file at ``path`` (as it is on disk) would run; ``None`` when nothing would."""
    file = Path(path).resolve()
    try:
        source = file.read_text()
        ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None
    how = runner(file, source)
    if how is None:
        return None
    try:
        digest = _sha256(source + (how.path.read_text() if how.path != file else ""))
    except OSError:
        return None
    key = _sha256(json.dumps([digest, python, str(file), DRY_RUN_VERSION]))[:40]
    return Planned(file, how, digest, cache_dir() / "dry-run" / f"{key}.json")


def cached(planned: Planned) -> DryRun | None:
    """The stored result of this very run, if there is one."""
    return _load(planned.cached, planned.digest)


def pending(planned: Planned) -> DryRun:
    """A run started in the background and not finished: its kernels wait for it."""
    return DryRun(str(planned.file), planned.digest, planned.runner.command, pending=True)


@dataclass(frozen=True)
class RunSettings:
    """How a dry run runs: the user's interpreter, its memory limit, the target TileLang detects, its time limits."""

    python: str
    memory_mb: int
    target: str = "sm_90"
    wall_s: float = WALL_S
    idle_s: float = IDLE_S


def execute(planned: Planned, settings: RunSettings, children: set[Supervised] | None = None) -> DryRun:
    """Run it (``store`` keeps the result); ``children`` holds the supervised child while it runs (to end it early)."""
    return _run(planned, settings, children if children is not None else set())


def dry_run(
    path: str,
    *,
    python: str,
    memory_mb: int,
    target: str = "sm_90",
    wall_s: float = WALL_S,
    idle_s: float = IDLE_S,
) -> DryRun | None:
    """The (cached) dry run of the file at ``path`` as it is on disk; ``None`` when it has nothing to run."""
    planned = plan(path, python)
    if planned is None:
        return None
    found = cached(planned)
    if found is not None:
        return found
    result = execute(planned, RunSettings(python, memory_mb, target, wall_s, idle_s))
    store(planned, result)
    return result


def _run(planned: Planned, settings: RunSettings, children: set[Supervised]) -> DryRun:
    start = time.monotonic()
    file, how, digest = planned.file, planned.runner, planned.digest
    argv, command = [settings.python, "-O", *how.argv], how.command
    with tempfile.TemporaryDirectory(prefix="tilescope-dry-run-") as folder:
        hooks, scratch = Path(folder) / "hook", Path(folder) / "cwd"
        hooks.mkdir()
        scratch.mkdir()
        out = hooks / "instances.jsonl"
        env = {**worker_env(os.environ), **_STAND_IN, **NO_GPU}
        if settings.target.startswith("sm_"):  # what TileLang detects on such a GPU, for kernels that ask at build time
            env["TILELANG_DEFAULT_TARGET"] = json.dumps({"kind": "cuda", "arch": settings.target})
        env = hook_env(hooks, out, env)
        roots = dict.fromkeys(str(import_root(f)) for f in (file, how.path))
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *roots])
        stop: str | None = None
        try:
            child = Supervised(
                argv,
                limits=Limits(memory_mb=settings.memory_mb, cpu_s=int(settings.wall_s) + 1),
                env=env,
                cwd=str(scratch),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, SupervisorLost) as err:
            return DryRun(str(file), digest, command, stop=f"could not start ({err})")
        children.add(child)
        try:
            code = wait_for_hook(child.process, out, settings.wall_s, settings.idle_s)
            stop = f"exit status {code}" if code else None
        except subprocess.TimeoutExpired as stopped:
            stop = "idle" if stopped.timeout == settings.idle_s else "timeout"
        finally:
            child.kill()
            children.discard(child)
        lines = read_lines(out)
    error = next((x.get("error") for x in lines if x.get("event") == "exit" and x.get("error")), None)
    tuned = {x.get("kernel") for x in lines if x.get("event") == "autotune" and x.get("config")}
    instances: dict[str, dict[str, Any]] = {}
    for line in lines:
        name = line.get("kernel")
        own = line.get("file") and os.path.realpath(line["file"]) == str(file)
        if line.get("event") == "instance" and own and name is not None and name not in instances and name not in tuned:
            instances[name] = {k: v for k, v in line.items() if k not in ("pid", "event")}
    return DryRun(str(file), digest, command, instances, error or stop, round(time.monotonic() - start, 1))


def _load(cached: Path, digest: str) -> DryRun | None:
    try:
        data = json.loads(cached.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != INSTANCES_VERSION:
        return None
    run = data.get("dry_run") or {}
    if run.get("source_sha256") != digest or run.get("version") != DRY_RUN_VERSION:
        return None
    instances = {e["kernel"]: e for e in data.get("instances", []) if isinstance(e, dict) and "kernel" in e}
    return DryRun(run["file"], digest, run["command"], instances, run.get("stop"), run.get("seconds", 0.0))


def store(planned: Planned, run: DryRun) -> None:
    """Written as ``.tilescope/instances.json`` is, with the run's outcome beside the instances."""
    cached = planned.cached
    entries = [
        {**entry, "command": f"dry run: {run.command}", "source_sha256": run.source_sha256}
        for entry in run.instances.values()
    ]
    outcome = {
        "version": DRY_RUN_VERSION,
        "file": run.file,
        "source_sha256": run.source_sha256,
        "command": run.command,
        "stop": run.stop,
        "seconds": run.seconds,
        "ran_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"version": INSTANCES_VERSION, "instances": entries, "dry_run": outcome}, indent=1))
        os.replace(tmp, cached)
    except OSError:
        return

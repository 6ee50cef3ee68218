"""The dry run: learn a kernel's sizes by running the program that builds it, with nothing compiled.

When the static tier cannot give every argument of a kernel (argparse defaults passed through
``main(args)``, sizes computed from tensors or read from a config), the file's own ``__main__``
runs (``python -m pkg.mod`` inside a package; for a module without one, the first test file of
its project that imports it, under pytest, else the first program there that imports it or its
package) with the record hook, in the supervised child the compiler worker runs in: its memory
limit, CPU seconds, a wall limit and no GPU (``CUDA_VISIBLE_DEVICES=""``), even on a machine with
one. In its place the program finds a fake device (``fake_device.py``): the GPU a recording saw,
else the target's usual part (``targets.PARTS``; an Ascend NPU for a program using ``torch_npu``),
whose tensors are shapes only, and every compile returns a stand-in (``dry_run_standin.py``:
outputs of the right shapes, result checks, timings and benchmarks off), so the program goes on
to its later kernels. Kernels an autotuner chose for are left out (it timed stand-ins).

A module without a ``__main__`` is taught by its project's tests, run as the project runs them
(pytest from the project's root with its ``conftest.py``, every parametrize case, one process, a
failing test not stopping the rest) until the time limit; one such run serves every module of
the package. The first instance of each kernel of every file the run built is kept, in the schema
of ``.tilescope/instances.json`` (``tilelang_core/SCHEMA.md``) plus the run's outcome, in the
user's cache folder keyed by what ran (and the interpreter) and valid while every file of the
program it imported is unchanged. It runs from a scratch folder: the program's relative writes
(plots) land there. Only ``Analyzer(dry_run=True)`` calls it, which ``check`` and a trusted
editor use; nothing here runs for an untrusted workspace.
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

from tilescope.core.record.recorder import (
    INSTANCES_VERSION,
    factory_of_inner_jit,
    fake_profile,
    hook_env,
    read_lines,
    recorded_device,
    wait_for_hook,
)
from tilescope.core.sandbox.spawn import NO_GPU, worker_env
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost

DRY_RUN_VERSION = 3
"""Bumped when what a dry run records changes, so older cached runs are not used."""
WALL_S = 90.0
TESTS_WALL_S = 180.0
"""A project's tests teach every module of its package at once, so they may run longer than one main."""
IDLE_S = 25.0
"""A run that built a kernel and then nothing new for this long is stopped (it is timing or training)."""
_STAND_IN = {"TILESCOPE_RECORD_STAND_IN": "1", "OMP_NUM_THREADS": "1"}
_NPU = re.compile(r"\btorch_npu\b|\.npu\(|[\"']npu[\"':]")
_TEST_NAME = re.compile(r"^(test_.*|.*_test)\.py$")
_MAX_FILES = 5000


@dataclass(frozen=True)
class DryRun:
    """What one dry run of a file saw: per kernel of the file, its first instance (instances.json schema)."""

    file: str
    source_sha256: str
    command: str
    """What ran: ``python -O FILE`` or ``python -O -m pytest TESTS``."""
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The first instance of each kernel of ``file``."""
    stop: str | None = None
    """Why the run ended early: an exception's first line and the program's line it was raised at,
    ``timeout`` or ``idle``; ``None`` at its end."""
    seconds: float = 0.0
    pending: bool = False
    """Started in the background and not finished yet (the editor analyses again when it ends)."""
    failed: list[str] = field(default_factory=list)
    """Tests that failed, each with why and where (a run of tests goes on past them)."""
    built: list[dict[str, Any]] = field(default_factory=list)
    """The first instance of each kernel of every file the run built (what ``store`` keeps for them all)."""
    imported: dict[str, str] = field(default_factory=dict)
    """The hash of each of the program's files the run imported: the cache holds while they are unchanged."""

    def source(self, kernel: str) -> str | None:
        """Where a kernel's values came from, for ``arg_sources`` and hover: ``dry run of main(), line 212,
        fake H100`` or ``dry run of test_gemm.py::test_gemm[256-128], line 30, fake H100``."""
        entry = self.instances.get(kernel)
        if entry is None:
            return None
        called = entry.get("called_at") or {}
        function = called.get("function")
        where = "the module" if function in (None, "<module>") else f"{function}()"
        other = called.get("file") and os.path.abspath(called["file"]) != self.file
        place = f" in {Path(called['file']).name}" if other else ""
        line = f", line {called['line']}" if called.get("line") else ""
        if entry.get("test"):  # the test's node id says where; a line would be in the library's code
            where, place, line = Path(entry["test"]).name, "", ""
        device = f", fake {entry['fake_device']}" if entry.get("fake_device") else ""
        return f"dry run of {where}{place}{line}{device}"

    def instance(self, kernel: str) -> dict[str, Any] | None:
        """The first instance the run built of ``kernel``, as ``instances.json`` holds one: its arguments
        (``record_values``'s form), the ``T.const`` sizes its tensors bound, what could not be recorded."""
        return self.instances.get(kernel)

    def why_not(self, kernel: str) -> str:
        """Why the run gave no values for ``kernel``, for the missing-arguments diagnostic."""
        if self.pending:
            return f"a dry run ({self.command}) is under way to learn them"
        how = f"a dry run ({self.command}) did not build it"
        if self.failed:
            tests = "a test" if len(self.failed) == 1 else f"{len(self.failed)} tests"
            how += f" ({tests} failed: {self.failed[0]})"
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
    root: Path | None = None
    """The project's root, for a run of its tests (their ``conftest.py`` and ``rootdir``)."""


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


def _project_files(file: Path) -> tuple[Path, list[Path]]:
    """The root of the project holding ``file`` (its ``pyproject.toml``, ``setup.py`` or ``.git``, at most
    four folders up) and its Python files, virtual environments and hidden folders left out."""
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
    return root, found


def runner(file: Path, source: str) -> Runner | None:
    """The file's own ``__main__``; else the project's test files importing it or a package holding it, under
    pytest from the project's root; else the first program with a ``__main__`` that imports it or its package
    (``from mylib import matmul``)."""
    if has_main(source):
        return _main_runner(file)
    dotted = module_name(file).split(".")
    names = {".".join(dotted[: i + 1]) for i in range(len(dotted))} | {file.stem}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    imports = re.compile(rf"^\s*(from|import)\s+([\w.]*\.)?({alternatives})(?![\w.])", re.M)
    programs, tests = [], []
    root, files = _project_files(file)
    for candidate in files:
        if candidate == file:
            continue
        try:
            text = candidate.read_text(errors="replace")
        except OSError:
            continue
        if not imports.search(text):
            continue
        if _TEST_NAME.match(candidate.name):
            tests.append(candidate)
        elif has_main(text):
            programs.append(candidate)
    if tests:
        argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *map(str, tests)]
        names = " ".join(t.name for t in tests[:3]) + (f" (+{len(tests) - 3})" if len(tests) > 3 else "")
        return Runner(tests[0], argv, f"python -O -m pytest {names}", root)
    return _main_runner(programs[0]) if programs else None


@dataclass(frozen=True)
class Planned:
    """A dry run ready to start: what runs, the hash of the file and its runner, where it is cached."""

    file: Path
    runner: Runner
    digest: str
    cached: Path
    npu: bool = False
    """The program uses ``torch_npu``: the fake device is an Ascend NPU."""


def plan(path: str, python: str) -> Planned | None:
    """What a dry run of the file at ``path`` (as it is on disk) would run; ``None`` when nothing would.
    Files run by the same program (a package's modules, by its tests) share one run and its cache."""
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
        runner_source = how.path.read_text() if how.path != file else source
    except OSError:
        return None
    key = _sha256(json.dumps([how.argv, python, DRY_RUN_VERSION]))[:40]
    npu = bool(_NPU.search(source) or _NPU.search(runner_source))
    return Planned(file, how, _sha256(source + runner_source), cache_dir() / "dry-run" / f"{key}.json", npu)


def cached(planned: Planned) -> DryRun | None:
    """The stored result of this very run, if every file of the program it imported is unchanged."""
    return _load(planned.cached, planned.file, planned.digest)


def pending(planned: Planned) -> DryRun:
    """A run started in the background and not finished: its kernels wait for it."""
    return DryRun(str(planned.file), planned.digest, planned.runner.command, pending=True)


@dataclass(frozen=True)
class RunSettings:
    """How a dry run runs: the user's interpreter, its memory limit, the target TileLang detects, its time limits."""

    python: str
    memory_mb: int
    target: str = "sm_90"
    wall_s: float | None = None
    """``None``: ``WALL_S`` for a program, ``TESTS_WALL_S`` for a project's tests."""
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
    wall_s: float | None = None,
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
    wall_s = settings.wall_s or (TESTS_WALL_S if how.root is not None else WALL_S)
    device = fake_profile(settings.target, recorded_device(str(file)), npu=planned.npu)
    with tempfile.TemporaryDirectory(prefix="tilescope-dry-run-") as folder:
        hooks, scratch = Path(folder) / "hook", Path(folder) / "cwd"
        hooks.mkdir()
        scratch.mkdir()
        out = hooks / "instances.jsonl"
        env = {**worker_env(os.environ), **_STAND_IN, **NO_GPU, "TILESCOPE_FAKE_DEVICE": json.dumps(device)}
        if device["target"].startswith(
            "sm_"
        ):  # what TileLang detects on such a GPU, for kernels that ask at build time
            env["TILELANG_DEFAULT_TARGET"] = json.dumps({"kind": "cuda", "arch": device["target"]})
        env = hook_env(hooks, out, env)
        roots = dict.fromkeys(str(import_root(f)) for f in (file, how.path))
        if how.root is not None:  # a src/ layout's package, importable as the project's tests expect
            roots.update(dict.fromkeys(str(p) for p in (how.root, how.root / "src") if p.is_dir()))
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *roots])
        stop: str | None = None
        try:
            child = Supervised(
                argv,
                limits=Limits(memory_mb=settings.memory_mb, cpu_s=int(wall_s) + 1),
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
            code = wait_for_hook(child.process, out, wall_s, settings.idle_s)
            stop = f"exit status {code}" if code else None
            if code == 1 and how.root is not None:  # pytest's "some tests failed": each is said in ``failed``
                stop = None
        except subprocess.TimeoutExpired as stopped:
            stop = "idle" if stopped.timeout == settings.idle_s else "timeout"
        finally:
            child.kill()
            children.discard(child)
        lines = read_lines(out)
    exit_line = next((x for x in lines if x.get("event") == "exit" and x.get("error")), None)
    error = _stopped(exit_line) if exit_line is not None else None
    failed = [_stopped(x) for x in lines if x.get("event") == "test-failed"]
    tuned = {(x.get("file"), x.get("kernel")) for x in lines if x.get("event") == "autotune" and x.get("config")}
    every: dict[tuple[str, str], dict[str, Any]] = {}
    for line in map(factory_of_inner_jit, lines):
        where, kernel = line.get("file"), line.get("kernel")
        if line.get("event") != "instance" or where is None or kernel is None or (where, kernel) in tuned:
            continue
        every.setdefault((os.path.realpath(where), kernel), {k: v for k, v in line.items() if k not in _NOT_KEPT})
    imported = {os.path.realpath(f) for x in lines for f in x.get("imports") or ()} | {str(file), str(how.path)}
    instances = {kernel: entry for (where, kernel), entry in every.items() if where == str(file)}
    seconds = round(time.monotonic() - start, 1)
    built, hashes = list(every.values()), _manifest(imported)
    return DryRun(str(file), digest, command, instances, error or stop, seconds, False, failed, built, hashes)


_NOT_KEPT = ("pid", "event", "imports", "outer", "seq")


def _stopped(line: dict[str, Any]) -> str:
    """Why the program (or a test) stopped, and at which of its lines: ``ShapeOnly: `.item()` needs the
    values ... (at test_norm.py, line 14)``; the test's node id first for a test."""
    at = line.get("at") or {}
    where = f" (at {Path(at['file']).name}, line {at['line']})" if at.get("file") and at.get("line") else ""
    test = f"{line['test']}: " if line.get("test") else ""
    return f"{test}{line.get('error')}{where}"


def _manifest(files: set[str]) -> dict[str, str]:
    """Each file's hash; a file that cannot be read has none (it cannot be checked, so nothing is cached)."""
    hashes = {}
    for name in sorted(files):
        try:
            hashes[name] = hashlib.sha256(Path(name).read_bytes()).hexdigest()
        except OSError:
            hashes[name] = ""
    return hashes


def _unchanged(manifest: dict[str, str]) -> bool:
    return bool(manifest) and all(digest and _manifest({name}).get(name) == digest for name, digest in manifest.items())


def _load(cached: Path, file: Path, digest: str) -> DryRun | None:
    try:
        data = json.loads(cached.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("version") != INSTANCES_VERSION:
        return None
    run = data.get("dry_run") or {}
    if run.get("version") != DRY_RUN_VERSION or not _unchanged(run.get("imported") or {}):
        return None
    if str(file) not in run["imported"] and run.get("source_sha256", {}).get(str(file)) != digest:
        return None  # a file the run never imported: valid for the very text it saw
    entries = [e for e in data.get("instances", []) if isinstance(e, dict) and "kernel" in e and "file" in e]
    instances: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if os.path.realpath(entry["file"]) == str(file):
            instances.setdefault(entry["kernel"], entry)
    stop, failed = run.get("stop"), run.get("failed") or []
    return DryRun(str(file), digest, run["command"], instances, stop, run.get("seconds", 0.0), failed=failed)


def store(planned: Planned, run: DryRun) -> None:
    """Written as ``.tilescope/instances.json`` is (every file's instances), with the run's outcome and the
    hashes of the program's files it imported beside them."""
    cached = planned.cached
    entries = [{**entry, "command": f"dry run: {run.command}"} for entry in run.built]
    outcome = {
        "version": DRY_RUN_VERSION,
        "file": run.file,
        "source_sha256": {run.file: run.source_sha256},
        "imported": run.imported,
        "command": run.command,
        "stop": run.stop,
        "failed": run.failed,
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

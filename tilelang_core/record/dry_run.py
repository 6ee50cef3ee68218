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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilescope.core.record.bytecode import compile_optimized, installed_sources
from tilescope.core.record.dry_run_program import Runner, import_root, runner
from tilescope.core.record.dry_run_result import DRY_RUN_VERSION, DryRun, cache_dir, load, manifest, save
from tilescope.core.record.recorder import (
    factory_of_inner_jit,
    fake_profile,
    hook_env,
    read_lines,
    recorded_device,
    wait_for_hook,
)
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.core.sandbox.spawn import NO_GPU, worker_env
from tilescope.core.sandbox.supervise import Limits, Supervised, SupervisorLost

WALL_S = 90.0
TESTS_WALL_S = 180.0
"""A project's tests teach every module of its package at once, so they may run longer than one main."""
IDLE_S = 25.0
"""A run that built a kernel and then nothing new for this long is stopped (it is timing or training)."""
_STAND_IN = {"TILESCOPE_RECORD_STAND_IN": "1", "OMP_NUM_THREADS": "1"}
_NPU = re.compile(r"\btorch_npu\b|\.npu\(|[\"']npu[\"':]")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


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
    return load(planned.cached, planned.file, planned.digest)


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
    how = planned.runner
    wall_s = settings.wall_s or (TESTS_WALL_S if how.root is not None else WALL_S)
    with tempfile.TemporaryDirectory(prefix=private_prefix("dry-run")) as folder:
        hooks, scratch = Path(folder) / "hook", Path(folder) / "cwd"
        hooks.mkdir()
        scratch.mkdir()
        out = hooks / "instances.jsonl"
        env = _environment(planned, settings, hooks, out)
        try:
            child = Supervised(
                [settings.python, "-O", *how.argv],
                limits=Limits(memory_mb=settings.memory_mb, cpu_s=int(wall_s) + 1),
                env=env,
                cwd=str(scratch),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, SupervisorLost) as err:
            return DryRun(str(planned.file), planned.digest, how.command, stop=f"could not start ({err})")
        children.add(child)
        try:
            stop = _wait(child, out, wall_s, settings.idle_s, tests=how.root is not None)
        finally:
            child.kill()
            children.discard(child)
        lines = read_lines(out)
    compile_optimized(settings.python, installed_sources(f for x in lines for f in x.get("uncompiled") or ()))
    return _outcome(planned, lines, stop, start)


def _environment(planned: Planned, settings: RunSettings, hooks: Path, out: Path) -> dict[str, str]:
    """The worker's clean environment with the record hook, stand-in compiles, no GPU and the fake device
    in its place, and the program's packages importable (a ``src/`` layout's as its tests expect)."""
    file, how = planned.file, planned.runner
    device = fake_profile(settings.target, recorded_device(str(file)), npu=planned.npu)
    env = {**worker_env(os.environ), **_STAND_IN, **NO_GPU, "TILESCOPE_FAKE_DEVICE": json.dumps(device)}
    if device["target"].startswith("sm_"):  # what TileLang detects on such a GPU, for kernels that ask at build time
        env["TILELANG_DEFAULT_TARGET"] = json.dumps({"kind": "cuda", "arch": device["target"]})
    env = hook_env(hooks, out, env)
    roots = dict.fromkeys(str(import_root(f)) for f in (file, how.path))
    if how.root is not None:  # a src/ layout's package, importable as the project's tests expect
        roots.update(dict.fromkeys(str(p) for p in (how.root, how.root / "src") if p.is_dir()))
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], *roots])
    return env


def _wait(child: Supervised, out: Path, wall_s: float, idle_s: float, tests: bool) -> str | None:
    """Why the run ended early (an exit status, ``timeout`` or ``idle``), ``None`` at its end."""
    try:
        code = wait_for_hook(child.process, out, wall_s, idle_s)
    except subprocess.TimeoutExpired as stopped:
        return "idle" if stopped.timeout == idle_s else "timeout"
    if code == 1 and tests:  # pytest's "some tests failed": each is said in ``failed``
        return None
    return f"exit status {code}" if code else None


def _outcome(planned: Planned, lines: list[dict[str, Any]], stop: str | None, start: float) -> DryRun:
    """The run from the hook's lines: the first instance of each kernel of every file it built (an autotuned
    kernel's left out: its tuner timed stand-ins), why it stopped, the tests that failed, what it imported."""
    file, how = planned.file, planned.runner
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
    built, hashes = list(every.values()), manifest(imported)
    return DryRun(
        str(file), planned.digest, how.command, instances, error or stop, seconds, False, failed, built, hashes
    )


_NOT_KEPT = ("pid", "event", "imports", "outer", "seq")


def _stopped(line: dict[str, Any]) -> str:
    """Why the program (or a test) stopped, and at which of its lines: ``ShapeOnly: `.item()` needs the
    values ... (at test_norm.py, line 14)``; the test's node id first for a test."""
    at = line.get("at") or {}
    where = f" (at {Path(at['file']).name}, line {at['line']})" if at.get("file") and at.get("line") else ""
    test = f"{line['test']}: " if line.get("test") else ""
    return f"{test}{line.get('error')}{where}"


def store(planned: Planned, run: DryRun) -> None:
    """Keep ``run`` where ``planned`` is cached (``dry_run_result.save``)."""
    save(planned.cached, run)

"""``tilescope record -- COMMAND ...``: run a program or a test suite and keep every kernel it builds.

The command runs with ``record_hook`` loaded through a private ``sitecustomize`` on ``PYTHONPATH``;
each instantiation it reports (file, kernel, arguments, ``T.const`` values, ``pass_configs``,
target, ``out_idx``, the autotuner's chosen config) is merged into ``.tilescope/instances.json`` of
the workspace, the way ``compile_commands.json`` tells clangd how each file is built. ``check`` and
the language server read it as an argument source right after the directive
(``RecordedValues``). The schema is in ``tilelang_core/SCHEMA.md``.

Without a GPU the program runs on the dry run's fake device (``fake_device.py``: the GPU an earlier
recording saw, else an H100; tensors shape-only) with stand-in compiles (``dry_run_standin.py``),
so it goes on past its first kernel and every instance it builds is kept; where it needs a value
no shape holds, it stops and the command says at which line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tilescope.core.record.record_values import is_encoded, source_value
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.core.targets import ASCEND, part

HOOK_MODULES = (
    "record_hook",
    "hook_program",
    "hook_arguments",
    "hook_lines",
    "hook_patches",
    "record_values",
    "fake_device",
    "fake_queries",
    "fake_values",
    "dry_run_standin",
)
"""The modules copied beside the private ``sitecustomize``, each as ``tilescope_<name>``: they run in the
user's program, which may have no Tilescope."""
INSTANCES_VERSION = 1
INSTANCES = Path(".tilescope") / "instances.json"
_SITECUSTOMIZE = """\
import os
import sys

import tilescope_record_hook

tilescope_record_hook.install()

# Python imports one sitecustomize: this one shadows any the environment had, so load that one too.
_here = os.path.dirname(os.path.abspath(__file__))
_saved, _self = sys.path[:], sys.modules.pop("sitecustomize")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
try:
    import sitecustomize  # noqa: F401
except ImportError:
    sys.modules["sitecustomize"] = _self  # none other: the import that is running this file must find this one
finally:
    sys.path[:] = _saved
"""


def record(
    command: list[str],
    workspace: Path,
    timeout_s: float | None = None,
    env: dict[str, str] | None = None,
    idle_s: float | None = None,
) -> tuple[int, list[dict[str, Any]]]:
    """Run ``command`` in ``workspace`` with the hook; its exit status (124 past ``timeout_s``, 125 when
    ``idle_s`` passed without a new line from the hook) and the hook's lines."""
    with tempfile.TemporaryDirectory(prefix=private_prefix("record")) as folder:
        out = Path(folder) / "instances.jsonl"
        env = hook_env(Path(folder), out, {**os.environ, **(env or {})})
        try:
            process = subprocess.Popen(command, cwd=workspace, env=env, start_new_session=timeout_s is not None)
        except FileNotFoundError as err:
            print(f"tilescope record: cannot run {command[0]!r}: {err}")
            return 127, []
        try:
            code = wait_for_hook(process, out, timeout_s, idle_s)
        except subprocess.TimeoutExpired as stopped:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = 125 if stopped.timeout == idle_s else 124
        lines = read_lines(out)
    return code, lines


def factory_of_inner_jit(line: dict[str, Any]) -> dict[str, Any]:
    """A ``@tilelang.jit`` that a function defines and calls (``return _build()``) is that function's kernel,
    built with that function's arguments (the hook's ``outer``): the kernel discovery finds and builds."""
    outer = line.get("outer")
    if not outer or line.get("event") != "instance":
        return line
    return {
        **line,
        "kernel": outer["kernel"],
        "line": outer["line"],
        "args": outer["args"],
        "consts": {},
        "style": "factory",
    }


def fake_profile(target: str, recorded: dict[str, Any] | None = None, npu: bool = False) -> dict[str, Any]:
    """The device a program run without one is given (``fake_device.py``'s profile): the GPU a recording
    saw, else ``target``'s usual part (H100 for a target without one); an Ascend NPU for ``torch_npu``."""
    if npu:
        return {"kind": "npu", "target": "ascend", **ASCEND}
    if recorded:
        return {"kind": "cuda", "target": f"sm_{recorded.get('major', 9)}{recorded.get('minor', 0)}", **recorded}
    if part(target) is None:  # metal, c: the program still asks for CUDA
        target = "sm_90"
    return {"kind": "cuda", "target": target, **(part(target) or {})}


def fake_env(profile: dict[str, Any]) -> dict[str, str]:
    """The environment that gives a program the fake device (and the target TileLang then detects)."""
    env = {"TILESCOPE_FAKE_DEVICE": json.dumps(profile)}
    if str(profile.get("target", "")).startswith("sm_"):
        env["TILELANG_DEFAULT_TARGET"] = json.dumps({"kind": "cuda", "arch": profile["target"]})
    return env


def hook_env(hook_dir: Path, out: Path, env: dict[str, str]) -> dict[str, str]:
    """Put the hook beside a private ``sitecustomize`` in ``hook_dir``; ``env`` with it loaded, writing to ``out``,
    and with it as a pytest plugin (``PYTEST_PLUGINS``), which reports each failed test."""
    for name in HOOK_MODULES:
        shutil.copy(Path(__file__).with_name(f"{name}.py"), hook_dir / f"tilescope_{name}.py")
    (hook_dir / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    path = os.pathsep.join(p for p in [str(hook_dir), env.get("PYTHONPATH", "")] if p)
    plugins = ",".join(p for p in [env.get("PYTEST_PLUGINS", ""), "tilescope_record_hook"] if p)
    env = {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}  # a pytest of the program's own sets it
    return {**env, "PYTHONPATH": path, "TILESCOPE_RECORD": str(out), "PYTEST_PLUGINS": plugins}


def read_lines(out: Path) -> list[dict[str, Any]]:
    """The hook's lines (a torn last line, from a process ended mid-write, is skipped)."""
    lines = []
    if out.exists():
        for text in out.read_text().splitlines():
            try:
                lines.append(json.loads(text))
            except json.JSONDecodeError:
                continue
    return lines


def _key(entry: dict[str, Any]) -> str:
    return json.dumps([entry["file"], entry["kernel"], entry.get("args"), entry.get("consts")], sort_keys=True)


def merge(workspace: Path, instances: list[dict[str, Any]], tuned: list[dict[str, Any]], command: str) -> int:
    """Add new instantiations to the workspace's file (most recent first); how many were new."""
    path = workspace / INSTANCES
    existing = load(path)
    chosen = {(t.get("file"), t.get("kernel")): t.get("config") for t in tuned}
    fresh = []
    for raw in map(factory_of_inner_jit, instances):
        if not raw.get("file") or not raw.get("kernel"):
            continue
        entry = {
            "file": _relative(raw["file"], workspace),
            "kernel": raw["kernel"],
            "line": raw.get("line"),
            "style": raw.get("style"),
            "args": raw.get("args") or {},
            "consts": raw.get("consts") or {},
            "tensors": raw.get("tensors") or {},
            "unrecorded": raw.get("unrecorded") or {},
            "error": raw.get("error"),
            "device": raw.get("device"),
            "pass_configs": raw.get("pass_configs") or {},
            "target": raw.get("target"),
            "out_idx": raw.get("out_idx"),
            "autotune_config": chosen.get((raw["file"], raw["kernel"])),
            "called_at": raw.get("called_at"),
            "test": raw.get("test"),
            "fake_device": raw.get("fake_device"),
            "command": command,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        fresh.append(entry)
    seen = {_key(e) for e in fresh}
    new = len({_key(e) for e in fresh} - {_key(e) for e in existing})
    kept = [*_unique(fresh), *(e for e in existing if _key(e) not in seen)]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": INSTANCES_VERSION, "instances": kept}, indent=1) + "\n")
    os.replace(tmp, path)
    return new


def _unique(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    result = []
    for entry in entries:
        if _key(entry) not in seen:
            seen.add(_key(entry))
            result.append(entry)
    return result


def _relative(file: str, workspace: Path) -> str:
    try:
        return Path(file).resolve().relative_to(workspace).as_posix()
    except ValueError:
        return Path(file).resolve().as_posix()


_loaded: dict[Path, tuple[tuple[int, int], list[dict[str, Any]]]] = {}


def load(path: Path) -> list[dict[str, Any]]:
    """The file's instances; read again only when it changed (the editor asks on every edit)."""
    try:
        stat = path.stat()
    except OSError:
        return []
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _loaded.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return []
    if not isinstance(data, dict) or data.get("version") != INSTANCES_VERSION:
        return []
    entries = [e for e in data.get("instances", []) if isinstance(e, dict) and "file" in e and "kernel" in e]
    _loaded[path] = (stamp, entries)
    return entries


def find_instances(path: str) -> Path | None:
    """The nearest ``.tilescope/instances.json`` above a file."""
    if path.startswith("<"):
        return None
    folder = Path(path).resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / INSTANCES).is_file():
            return candidate / INSTANCES
    return None


def wait_for_hook(process: subprocess.Popen[bytes], out: Path, timeout_s: float | None, idle_s: float | None) -> int:
    """The exit status; ``TimeoutExpired`` (its ``timeout`` saying which limit) past either limit."""
    if idle_s is None:
        return process.wait(timeout=timeout_s)
    start = last = time.monotonic()
    size = -1
    while True:
        try:
            return process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            grown = out.stat().st_size if out.exists() else 0
            if grown != size:
                size, last = grown, now
            if timeout_s is not None and now - start > timeout_s:
                raise subprocess.TimeoutExpired(process.args, timeout_s) from None
            if size > 0 and now - last > idle_s:  # idle only counts once the hook has written
                raise subprocess.TimeoutExpired(process.args, idle_s) from None


def recorded_instance(path: str, kernel: str) -> dict[str, Any] | None:
    """The most recent recorded instantiation of a kernel of a file, as ``instances.json`` holds it."""
    instances = find_instances(path)
    if instances is None:
        return None
    workspace = instances.parent.parent
    file = _relative(path, workspace)
    return next((e for e in load(instances) if e["file"] == file and e["kernel"] == kernel), None)


def recorded_device(path: str) -> dict[str, Any] | None:
    """The GPU a ``tilescope record`` run in the workspace of ``path`` built on (the most recent one seen)."""
    instances = find_instances(path)
    entries = load(instances) if instances is not None else []
    return next((e["device"] for e in entries if isinstance(e.get("device"), dict) and e["device"]), None)


class RecordedValues:
    """The most recent recorded values of each kernel of one file (its arguments and ``T.const``
    values), as the static tier reads values (``source_value``); the instances are found and read
    once (an analysis asks for each of a thousand kernels), and ``stamp`` says which it read."""

    def __init__(self, path: str) -> None:
        self.path = path
        instances = find_instances(path)
        self.stamp = _stamp(instances)
        self._file = _relative(path, instances.parent.parent) if instances is not None else ""
        self._entries = load(instances) if instances is not None else []

    def __call__(self, kernel: str) -> dict[str, Any]:
        entry = next((e for e in self._entries if e["file"] == self._file and e["kernel"] == kernel), None)
        if entry is None:
            return {}
        values = {**(entry.get("args") or {}), **(entry.get("consts") or {})}
        plain = {k: v for k, v in values.items() if is_encoded(v)}
        return {k: v for k, v in ((k, source_value(v)) for k, v in plain.items()) if v is not None}


def recorded_stamp(path: str) -> tuple[object, ...] | None:
    """Which instances file ``path``'s recorded values come from, and its state on disk."""
    return _stamp(find_instances(path))


def _stamp(instances: Path | None) -> tuple[object, ...] | None:
    if instances is None:
        return None
    try:
        stat = instances.stat()
    except OSError:
        return (str(instances),)
    return (str(instances), stat.st_mtime_ns, stat.st_size)

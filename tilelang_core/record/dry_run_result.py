"""What one dry run of a file saw (``DryRun``), and where it is kept: the user's cache folder, keyed by
what ran (and the interpreter), in the schema of ``.tilescope/instances.json`` plus the run's outcome,
valid while every file of the program it imported is unchanged. Runs on the host.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.core.model import DRY_RUN
from tilescope.core.record.recorder import INSTANCES_VERSION

DRY_RUN_VERSION = 3
"""Bumped when what a dry run records changes, so older cached runs are not used."""


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
        return f"{DRY_RUN} of {where}{place}{line}{device}"

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


def manifest(files: set[str]) -> dict[str, str]:
    """Each file's hash; a file that cannot be read has none (it cannot be checked, so nothing is cached)."""
    hashes = {}
    for name in sorted(files):
        try:
            hashes[name] = hashlib.sha256(Path(name).read_bytes()).hexdigest()
        except OSError:
            hashes[name] = ""
    return hashes


def _unchanged(hashes: dict[str, str]) -> bool:
    return bool(hashes) and all(digest and manifest({name}).get(name) == digest for name, digest in hashes.items())


def load(cached: Path, file: Path, digest: str) -> DryRun | None:
    """The run stored at ``cached`` for ``file`` (whose text hashed to ``digest``), if it still holds."""
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


def save(cached: Path, run: DryRun) -> None:
    """Written as ``.tilescope/instances.json`` is (every file's instances), with the run's outcome and the
    hashes of the program's files it imported beside them."""
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

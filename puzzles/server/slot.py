"""``GradingSlot``: the Ray actor that grades, one per GPU (``num_gpus=1``), or one per CPU without any GPU.

It holds a warm ``IsolatedGrader``, the sealed grader ``tilescope puzzles check`` uses, on whichever node
Ray placed it: the learner's file is written to a private folder there and graded by that grader's
helper processes (loader, kernel process, analyzer) with their limits and seal. Nothing here runs on
the server; the verdict comes back as the grader's ``Report`` in JSON.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tilescope.core.sandbox.private_files import private_prefix

PRIVATE_PREFIX = private_prefix("grading")
"""How a slot's private folder is named: a report that names a file in it is scrubbed of it before it is copied."""


def safe_name(filename: str) -> str:
    """The file's own name, kept readable in reports, but never a path: ``../x.py`` becomes ``x.py``."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", Path(filename.replace("\\", "/")).name).lstrip(".")
    return base if base.endswith(".py") else f"{base or 'submission'}.py"


class GradingSlot:
    def __init__(self, cpu_only: bool, protected: Sequence[str] = ()) -> None:
        """``protected``: the server's protected paths (its database), which every sealed child of this slot
        is denied, also where the cluster was started without the server's environment."""
        from tilescope.core.sandbox.clean_env import protect
        from tilescope.core.sandbox.supervise import become_undumpable
        from tilescope.puzzles.isolated import IsolatedGrader

        become_undumpable()  # the Ray worker holds the cluster's credentials, and the grader the hidden seed
        protect(protected)
        self.cpu_only = cpu_only
        self.grader = IsolatedGrader(cpu_only=cpu_only)
        self.folder = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))  # mode 0700

    def where(self) -> dict[str, Any]:
        """Where this slot runs; the first call also waits for Ray to have placed it."""
        import ray

        return {"node": str(ray.get_runtime_context().get_node_id()), "host": socket.gethostname(), "pid": os.getpid()}

    def grade(self, submission: int, puzzle: str, filename: str, source: str) -> dict[str, Any]:
        from tilescope.core.model import to_json
        from tilescope.puzzles.session import CheckOptions

        folder = self.folder / str(submission)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        path = folder / safe_name(filename)
        path.write_text(source, encoding="utf-8")
        started = time.perf_counter()
        try:
            report = self.grader.check(puzzle, path, CheckOptions(device="cpu" if self.cpu_only else None))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return {
            "report": to_json(dataclasses.replace(report, path=filename)),
            "seconds": time.perf_counter() - started,
            **self.where(),
        }

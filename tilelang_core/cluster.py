"""``tilescope check ... --ray [ADDRESS]``: the files of a check as tasks on a Ray cluster.

Each worker slot is a Ray actor holding one warm ``Analyzer``, the same supervised compiler worker a
local check uses, so the memory limit, the timeouts and the isolation hold on every node. Files are
sent with their text (a node need not share the file system; a file that imports its siblings needs
the checkout at the same path there) and answered as ``FileAnalysis`` records, put back in the order
the files were given, so the report is the one ``-j 1`` prints. A node that dies takes its actor's
task with it: that slot's actor is replaced by a new one on a live node, the file is sent again, and
the run says so on stderr. Without an address, ``ray.init`` starts a local cluster for the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tilescope.core.model import FileAnalysis, from_json, to_json
from tilescope.core.service import Analyzer

RETRIES = 3
"""How many times one file is sent again after the node analysing it was lost."""


class CheckSlot:
    """One worker slot: a warm compiler worker on whichever node Ray placed this actor."""

    def __init__(self, analyzer_options: dict[str, Any]) -> None:
        self.analyzer = Analyzer(**analyzer_options)

    def node(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def analyze(self, path: str, source: str | None, options: dict[str, Any]) -> dict[str, Any]:
        return to_json(self.analyzer.analyze(path, source, **options))


def _read(file: Path) -> str | None:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the slot reads it and reports why it cannot, as a local check does


def analyze_files(
    files: list[Path],
    slots: int | None,
    options: dict[str, Any],
    analyzer_options: dict[str, Any],
    address: str | None = None,
    progress: Callable[[int, int, Path], None] | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> list[FileAnalysis]:
    """Every file's analysis, in the order given, computed by ``slots`` actors (default: one per CPU); no
    ``address`` starts a new local cluster (never joining one another program started)."""
    import ray
    from ray.exceptions import RayError, RayTaskError

    started_here = not ray.is_initialized()
    if started_here:
        # A local cluster listens on loopback only, with a small object store (records are kilobytes).
        local = {"object_store_memory": 256 << 20, "_node_ip_address": "127.0.0.1"} if address is None else {}
        ray.init(
            address=address or "local", include_dashboard=False, log_to_driver=False, configure_logging=False, **local
        )
    try:
        count = slots or max(1, int(ray.cluster_resources().get("CPU", os.cpu_count() or 1)))
        count = max(1, min(count, len(files)))
        actor = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(CheckSlot)

        def start() -> Any:
            return actor.options(scheduling_strategy="SPREAD").remote(analyzer_options)

        workers = [start() for _ in range(count)]
        pending: dict[Any, tuple[int, int]] = {}
        idle = list(range(count))
        queue = sorted(range(len(files)), key=lambda i: -_size(files[i]))
        tries = [0] * len(files)
        results: list[FileAnalysis | None] = [None] * len(files)
        done = 0
        while queue or pending:
            while queue and idle:
                index, slot = queue.pop(0), idle.pop(0)
                ref = workers[slot].analyze.remote(str(files[index].resolve()), _read(files[index]), options)
                pending[ref] = (index, slot)
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, slot = pending.pop(ready[0])
            idle.append(slot)
            try:
                results[index] = from_json(FileAnalysis, ray.get(ready[0]))
            except RayTaskError:
                raise  # the analysis itself failed: a defect of ours, not of the cluster
            except RayError as err:
                tries[index] += 1
                if tries[index] > RETRIES:
                    raise RuntimeError(f"{files[index]}: lost {tries[index]} workers in a row ({err})") from None
                log(f"tilescope check: the node analysing {files[index]} was lost; sending it to a new worker")
                ray.kill(workers[slot], no_restart=True)
                workers[slot] = start()
                queue.insert(0, index)
                continue
            done += 1
            if progress is not None:
                progress(done, len(files), files[index])
        return [r for r in results if r is not None]
    finally:
        if started_here:
            ray.shutdown()


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0

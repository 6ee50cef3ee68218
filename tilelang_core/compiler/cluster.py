"""``--ray [ADDRESS]``: a command's analyses (the files of a check, the variants of a file) as tasks on a Ray cluster.

Each worker slot is a Ray actor holding one warm ``Analyzer``, the same supervised compiler worker a
local run uses, so the memory limit, the timeouts and the isolation hold on every node. Requests are
sent with their text (a node need not share the file system; a file that imports its siblings needs
the checkout at the same path there) and answered as ``FileAnalysis`` records, put back in the order
the requests were given, so the report is the one ``-j 1`` prints. A node that dies takes its actor's
task with it: that slot's actor is replaced by a new one on a live node, the request is sent again,
and the run says so on stderr. Without an address, ``ray.init`` starts a local cluster for the run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis, from_json, to_json
from tilescope.core.protocol import CONFIG_ARG

RETRIES = 3
"""How many times one request is sent again after the node analysing it was lost."""


@dataclass(frozen=True)
class Request:
    """One ``Analyzer.analyze(path, source, **options)`` call."""

    path: str
    source: str | None
    options: dict[str, Any] = field(default_factory=dict[str, Any])

    def label(self) -> str:
        """How a lost node's line names it: the file, and the kernel, target and autotune config asked for."""
        parts = [self.path, *(str(self.options[k]) for k in ("kernel", "target") if self.options.get(k))]
        config = (self.options.get("args") or {}).get(CONFIG_ARG)
        return " ".join(parts if config is None else [*parts, f"config {config}"])


def is_loopback(address: str | None) -> bool:
    return address is not None and address.split(":")[0] in ("127.0.0.1", "localhost")


def join(address: str | None) -> bool:
    """Connect this process to the Ray cluster at ``address`` (``None``: start a new local one, on loopback only,
    never joining one another program started); ``True`` when this call started Ray here."""
    if is_loopback(address):
        # Ray turns a loopback address into this machine's outward one, where a cluster started on loopback
        # does not listen, unless it treats this process as a single machine's (read when Ray is imported).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    if ray.is_initialized():
        return False
    local: dict[str, Any] = {}
    if address is None:  # a small object store: records are kilobytes
        local = {"object_store_memory": 256 << 20, "_node_ip_address": "127.0.0.1"}
    elif is_loopback(address):
        local = {"_node_ip_address": "127.0.0.1"}
    ray.init(address=address or "local", include_dashboard=False, log_to_driver=False, configure_logging=False, **local)
    return True


class CheckSlot:
    """One worker slot: a warm compiler worker on whichever node Ray placed this actor."""

    def __init__(self, analyzer_options: dict[str, Any]) -> None:
        self.analyzer = Analyzer(**analyzer_options)

    def analyze(self, path: str, source: str | None, options: dict[str, Any]) -> dict[str, Any]:
        return to_json(self.analyzer.analyze(path, source, **options))


class Slots:
    """``count`` actors (default: one per CPU of the cluster) kept warm across ``map`` calls; a context manager
    that starts a local cluster when none is running and no ``address`` is given, and stops what it started."""

    def __init__(
        self,
        count: int | None,
        analyzer_options: dict[str, Any],
        address: str | None = None,
        log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    ) -> None:
        import ray

        self.log = log
        self.started_here = join(address)
        self.count = max(1, count or int(ray.cluster_resources().get("CPU", os.cpu_count() or 1)))
        self.actor = ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(CheckSlot)
        self.analyzer_options = analyzer_options
        self.workers: list[Any] = []
        """The slots' actors; ``None`` for one lost with its node while others carry on."""

    def _start(self) -> Any:
        return self.actor.options(scheduling_strategy="SPREAD").remote(self.analyzer_options)

    def map(
        self, requests: list[Request], progress: Callable[[int, int, int], None] | None = None
    ) -> list[FileAnalysis]:
        """Every request's analysis, in the order given; the largest sources are sent first."""
        import ray
        from ray.exceptions import RayError, RayTaskError

        while len(self.workers) < min(self.count, len(requests)):
            self.workers.append(self._start())
        pending: dict[Any, tuple[int, int]] = {}
        idle = list(range(min(len(self.workers), len(requests))))
        queue = sorted(range(len(requests)), key=lambda i: -len(requests[i].source or ""))
        tries = [0] * len(requests)
        results: list[FileAnalysis | None] = [None] * len(requests)
        done = 0
        while queue or pending:
            while queue and idle:
                index, slot = queue.pop(0), idle.pop(0)
                request = requests[index]
                ref = self.workers[slot].analyze.remote(request.path, request.source, request.options)
                pending[ref] = (index, slot)
            ready, _ = ray.wait(list(pending), num_returns=1)
            index, slot = pending.pop(ready[0])
            try:
                results[index] = from_json(FileAnalysis, ray.get(ready[0]))
            except RayTaskError:
                raise  # the analysis itself failed: a defect of ours, not of the cluster
            except RayError as err:
                tries[index] += 1
                name = requests[index].label()
                if tries[index] > RETRIES:
                    raise RuntimeError(f"{name}: lost {tries[index]} workers in a row ({err})") from None
                ray.kill(self.workers[slot], no_restart=True)
                queue.insert(0, index)
                if idle or pending:
                    # Other slots carry on; a new actor could wait for ever for a CPU the survivors hold.
                    self.log(f"tilescope: the node analysing {name} was lost; another worker takes it")
                    self.workers[slot] = None
                else:
                    self.log(f"tilescope: the node analysing {name} was lost; sending it to a new worker")
                    self.workers[slot] = self._start()
                    idle.append(slot)
                continue
            idle.append(slot)
            done += 1
            if progress is not None:
                progress(done, len(requests), index)
        self.workers = [w for w in self.workers if w is not None]
        return [r for r in results if r is not None]

    def close(self) -> None:
        import ray

        for worker in self.workers:
            ray.kill(worker, no_restart=True)
        self.workers = []
        if self.started_here:
            ray.shutdown()

    def __enter__(self) -> Slots:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


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
    requests = [Request(str(f.resolve()), _read(f), options) for f in files]
    step = None if progress is None else lambda done, total, index: progress(done, total, files[index])
    with Slots(min(slots, len(files)) if slots else None, analyzer_options, address, log) as workers:
        return workers.map(requests, step)


def _read(file: Path) -> str | None:
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # the slot reads it and reports why it cannot, as a local check does

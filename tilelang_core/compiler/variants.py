"""Every variant of a file's kernels (target × autotune config), lowered in parallel workers.

Each variant is one ``Analyzer.analyze`` call, exactly what ``tilescope check --target T`` asks
(plus ``config=N`` for an autotuned kernel), spread over ``jobs`` Analyzers, each with its own
worker process, so that several cores lower at once, or over a Ray cluster's slots
(``cluster.Slots``, ``--ray``): either is a ``Lowerer``. An autotuned kernel's configs are only known
once the worker has read its search space, so ``plan_variants`` lowers each kernel on the first
target first (a row of the table either way) and times it: the plan says how many lowerings are
left and about how long they take before ``lower_variants`` starts them.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.cluster import Request
from tilescope.core.compiler.discovery import instantiations
from tilescope.core.compiler.service import Analyzer
from tilescope.core.fit import fit
from tilescope.core.model import Diagnostic, FileAnalysis, Span, Variant, VariantsReport
from tilescope.core.protocol import CONFIG_ARG

DEFAULT_TARGETS = ("sm_80", "sm_90", "sm_100", "gfx942", "metal")


@dataclass(frozen=True)
class Job:
    kernel: str
    target: str
    config: int | None


Progress = Callable[[int, int, int], None]
"""``progress(done, total, index)`` after each request finishes (``index`` in the order given)."""


class Lowerer(Protocol):
    """Where the variants are lowered: this machine's ``Pool`` or a Ray cluster's ``cluster.Slots``."""

    count: int
    """Requests lowered at once."""

    def map(self, requests: list[Request], progress: Progress | None = None) -> list[FileAnalysis]: ...


class Pool:
    """``jobs`` Analyzers, each used by one thread at a time."""

    def __init__(
        self, jobs: int, timeout_s: float, memory_mb: int, python: str | None = None, sealed: bool = False
    ) -> None:
        """``sealed``: the workers write only folders of their own (``Analyzer``), for source no one vouches for."""
        self._stack = ExitStack()
        self.count = max(jobs, 1)
        self._free: queue.Queue[Analyzer] = queue.Queue()
        for _ in range(max(jobs, 1)):
            analyzer = Analyzer(timeout_s=timeout_s, memory_mb=memory_mb, python=python, sealed=sealed)
            self._free.put(self._stack.enter_context(analyzer))
        self.executor = ThreadPoolExecutor(max_workers=max(jobs, 1))

    def warm(self) -> None:
        """Start every worker at once (each imports TileLang: seconds)."""
        list(self.executor.map(lambda _: self._with(lambda a: a.warm()), range(self._free.qsize())))

    def _with(self, use: Callable[[Analyzer], Any]) -> Any:
        analyzer = self._free.get()
        try:
            return use(analyzer)
        finally:
            self._free.put(analyzer)

    def map(self, requests: list[Request], progress: Progress | None = None) -> list[FileAnalysis]:
        """Every request's analysis, in the order given; ``progress`` as each one finishes."""

        def analyze(request: Request) -> FileAnalysis:
            return self._with(lambda a: a.analyze(request.path, request.source, **request.options))

        futures = {self.executor.submit(analyze, r): index for index, r in enumerate(requests)}
        if progress is not None:
            for done, future in enumerate(as_completed(futures), 1):
                progress(done, len(requests), futures[future])
        return [future.result() for future in futures]

    def close(self) -> None:
        self.executor.shutdown()
        self._stack.close()


@contextmanager
def pool(jobs: int, timeout_s: float = 60.0, memory_mb: int = 6144, python: str | None = None) -> Iterator[Pool]:
    instance = Pool(jobs, timeout_s, memory_mb, python)
    try:
        yield instance
    finally:
        instance.close()


def parse_configs(text: str) -> list[int] | None:
    """``all`` → ``None`` (every config); ``0,3`` → ``[0, 3]``."""
    if text.strip() == "all":
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--configs expects all or N,M,..., got {text!r}") from None


@dataclass
class VariantPlan:
    """What ``plan_variants`` lowered already and what is left, with the time one lowering took."""

    path: str
    source: str
    plan: list[Job]
    """Every row of the report, in kernel, target, config order."""
    done: dict[Job, FileAnalysis]
    spaces: dict[str, list[dict[str, Any]]]
    """Each autotuned kernel's configs."""
    request: Callable[[Job], Request]
    seconds_each: float
    """Wall-clock seconds one lowering took in the first round (worker start included where the
    workers were not warm), for the estimate of the rest."""

    @property
    def todo(self) -> list[Job]:
        return [job for job in self.plan if job not in self.done]

    def estimate_s(self, slots: int) -> float:
        """Seconds the lowerings left should take over ``slots`` workers."""
        return self.seconds_each * len(self.todo) / max(slots, 1)


def plan_variants(
    workers: Lowerer,
    path: str,
    *,
    kernel: str | None = None,
    targets: list[str] | None = None,
    configs: list[int] | None = None,
    args: dict[str, Any] | None = None,
    ptxas: bool = False,
) -> VariantPlan:
    """Lower every kernel on the first target (reading autotuned kernels' search spaces) and plan the
    rest: every (kernel, target, config) variant, rows in kernel, target, config order."""
    path = str(Path(path).resolve())
    source = Path(path).read_text()
    targets = list(targets or DEFAULT_TARGETS)
    names = [i.kernel.name for i in instantiations(source, path) if kernel is None or i.kernel.name == kernel]

    def request(job: Job) -> Request:
        extra = {} if job.config is None else {CONFIG_ARG: job.config}
        given = {**(args or {}), **extra}
        return Request(
            path, source, {"target": job.target, "kernel": job.kernel, "args": given or None, "ptxas": ptxas}
        )

    if not names:
        job = Job(kernel or "", targets[0], None)
        started = time.perf_counter()
        analysis = workers.map([Request(path, source, {"target": targets[0], "kernel": kernel})])
        return VariantPlan(path, source, [job], {job: analysis[0]}, {}, request, time.perf_counter() - started)
    done: dict[Job, FileAnalysis] = {}
    spaces: dict[str, list[dict[str, Any]]] = {}
    probes = [Job(name, targets[0], None) for name in names]
    started = time.perf_counter()
    probed = workers.map([request(job) for job in probes])
    seconds_each = (time.perf_counter() - started) * min(workers.count, len(probes)) / len(probes)
    for job, result in zip(probes, probed, strict=True):
        tune = result.kernels[0].autotune if result.kernels else None
        if tune is None or tune.chosen_by == "call":
            done[job] = result
            continue
        spaces[job.kernel] = [c.values for c in tune.configs]
        if tune.chosen is not None and (configs is None or tune.chosen in configs):
            done[Job(job.kernel, job.target, tune.chosen)] = result
    plan: list[Job] = []
    for name in names:
        chosen = (
            [None] if name not in spaces else [i for i in range(len(spaces[name])) if configs is None or i in configs]
        )
        if name in spaces and Job(name, targets[0], None) in done:
            chosen = [None, *chosen]
        plan.extend(Job(name, target, index) for target in targets for index in chosen)
    return VariantPlan(path, source, plan, done, spaces, request, seconds_each)


def lower_variants(workers: Lowerer, planned: VariantPlan, progress: Progress | None = None) -> VariantsReport:
    """Lower what ``planned`` has left (``progress`` after each) and report every variant."""
    todo = planned.todo
    done = dict(planned.done)
    done.update(zip(todo, workers.map([planned.request(job) for job in todo], progress), strict=True))
    return VariantsReport(
        planned.path, [_variant(job, done[job], planned.spaces.get(job.kernel)) for job in planned.plan]
    )


def run_variants(
    workers: Lowerer,
    path: str,
    *,
    kernel: str | None = None,
    targets: list[str] | None = None,
    configs: list[int] | None = None,
    args: dict[str, Any] | None = None,
    ptxas: bool = False,
) -> VariantsReport:
    """Lower every (kernel, target, config) variant at once, without a word: ``plan_variants`` then
    ``lower_variants``."""
    planned = plan_variants(workers, path, kernel=kernel, targets=targets, configs=configs, args=args, ptxas=ptxas)
    return lower_variants(workers, planned)


def _variant(job: Job, result: FileAnalysis, space: list[dict[str, Any]] | None) -> Variant:
    config = space[job.config] if space is not None and job.config is not None else None
    model = result.kernels[0] if result.kernels else None
    if model is not None:
        status, reason, line = fit(model)
    else:
        first = next((d for d in result.diagnostics if d.severity == "error"), None) or _nothing(result)
        status, reason, line = "fails", first.message, first.span.line
    return Variant(job.kernel, job.target, job.config, config, status, reason, line, result.kernels, result.diagnostics)


def _nothing(result: FileAnalysis) -> Diagnostic:
    # An error, not the code's usual warning: a variant with nothing analysed failed.
    return next(iter(result.diagnostics), diagnostic("no-kernels", Span(1), form="nothing", severity="error"))


def label(variant: Variant) -> str:
    """``sm_90`` or ``sm_90:3``: how the command line names a variant."""
    return variant.target if variant.config_index is None else f"{variant.target}:{variant.config_index}"

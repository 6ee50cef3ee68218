"""``Analyzer``: the compiler tier as a service, backed by a warm, supervised worker process.

User code runs only in a child the worker forks per request (``worker.main``), so nothing one
analysis leaves behind reaches the next. Each kernel is a separate request, so a kernel that hangs,
exits the process or exhausts its memory limit becomes a diagnostic on that kernel's line and the
caller never sees an exception. A timeout is the user's wall clock: one deadline per kernel covers
starting the worker, the dry run, loading, building and lowering, however busy the machine is.
Results are cached by (source hash, path, kernel, arguments, target). The module is longer than most: it is
the one class every front end asks, and each of its requests shares the worker, its lock and its deadline.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.discovery import Instantiation, discover, instantiations, syntax_diagnostic
from tilescope.core.compiler.dry_runs import DryRuns
from tilescope.core.compiler.failures import failed, file_only, internal_failure, run_failure, worker_diagnostic
from tilescope.core.compiler.worker_link import WorkerError, WorkerLink
from tilescope.core.lines import SourceError, read_source
from tilescope.core.model import (
    Diagnostic,
    FileAnalysis,
    IRText,
    KernelModel,
    KernelRef,
    RunReport,
    Span,
    Timing,
    from_json,
    to_json,
)
from tilescope.core.protocol import AnalyzeRequest, PassIRRequest, ProfileRequest, RunRequest, WorkerRequest
from tilescope.core.sandbox.landlock import Sandbox
from tilescope.core.static import StaticFile
from tilescope.core.targets import target_error

HAZARD_BUDGET_S = 2.0
"""Seconds of CPU interpretation per kernel that ``analyze`` spends looking for hazards by default."""

NO_KERNELS = diagnostic("no-kernels", Span(line=1))

DEFAULT_TIMEOUT_S = 120.0
"""Seconds one kernel (or one run) may compute, the same for every command and the MCP server."""
DEFAULT_MEMORY_MB = 8192
"""Address space of the compiler worker (``RLIMIT_AS``) for the commands and the MCP server."""
EDITOR_MEMORY_MB = 6144
"""Address space of the compiler worker of an ``Analyzer`` made with the defaults (the language server's)."""
WARM_S = 300.0
"""How long ``warm`` lets the worker's warm-up steps (lowerings of its own small kernels) take."""


class EarlyWorker:
    """A worker process started before the ``Analyzer`` that takes it is made: an editor's server starts one
    with its own interpreter before it imports the rest of itself, so the worker's import of TileLang (seconds)
    overlaps the server's start. The analyzer made for the settings adopts it when they name that interpreter
    and the workspace is trusted; otherwise it is ended unused. The zygote runs no code of the workspace's, so
    starting it before trust is known runs nothing the user did not install."""

    def __init__(self, python: str | None = None) -> None:
        self.link: WorkerLink | None = WorkerLink(python or sys.executable, EDITOR_MEMORY_MB)

    def take(self, python: str, memory_mb: int) -> WorkerLink | None:
        """The process, for an analyzer with this interpreter and memory limit; None (and it ended) otherwise."""
        link, self.link = self.link, None
        if link is not None and (link.python != python or link.memory_mb != memory_mb or not link.alive):
            link.kill()
            return None
        return link

    def discard(self) -> None:
        """End it unused (an untrusted workspace, another interpreter)."""
        link, self.link = self.link, None
        if link is not None:
            link.kill()


class Analyzer:
    """Thread-safe front of the compiler tier. Never raises for bad user input."""

    def __init__(
        self,
        timeout_s: float = 60.0,
        memory_mb: int = EDITOR_MEMORY_MB,
        python: str | None = None,
        cache_size: int = 64,
        sandbox: Sandbox | None = None,
        workdir: str | None = None,
        dry_run: bool = False,
        on_dry_run: Callable[[str], None] | None = None,
        gpu: bool = False,
        sealed: bool = False,
        warm_up: bool = True,
        clock_started: float | None = None,
        early: EarlyWorker | None = None,
    ) -> None:
        """``sandbox`` and ``workdir``: the worker's file sandbox and working folder (``WorkerLink``), for
        callers that run code they do not trust to leave their files alone; ``sealed``: the worker writes only a
        private folder of its own (an agent's source text). ``gpu``: the worker sees the machine's GPUs (only
        ``profile``'s timing worker; analysis never does). Without ``warm_up`` the worker takes no warm-up steps
        (for one check's analyzer, ``protocol.COLD_VARIABLE``).

        ``dry_run``: where the static sources leave a kernel without every size, run the file's own
        ``__main__`` with stand-in kernels to learn them (``dry_run.py``); only for a trusted workspace.
        With ``on_dry_run``, a run not cached yet goes on in the background (its kernels say so meanwhile)
        and ``on_dry_run(path)`` is called when it has finished, to analyse the file again.

        ``clock_started`` (``time.monotonic``): when the user's clock started for the first analysis, a
        command's own start, so that its ``--timeout`` also covers what the command did before.

        ``early``: a worker started ahead of this analyzer (``EarlyWorker``), adopted when it was started as
        this analyzer would start its own, ended otherwise."""
        self._clock_started = clock_started
        self.sandbox = sandbox
        self.workdir = workdir
        self.gpu = gpu
        self.sealed = sealed
        self.warm_up = warm_up
        self.timeout_s = timeout_s
        self.dry_run = dry_run
        self.memory_mb = memory_mb
        self.python = python or sys.executable
        self._dry_runs = DryRuns(self.python, memory_mb, on_dry_run)
        self._lock = threading.Lock()
        self._worker: WorkerLink | None = None
        if early is not None and not (sandbox or workdir or gpu or sealed or not warm_up):
            self._worker = early.take(self.python, memory_mb)
        elif early is not None:
            early.discard()
        self._cache: OrderedDict[str, KernelModel] = OrderedDict()
        self._cache_size = cache_size
        self._stopped = False
        self._state_lock = threading.Lock()
        """Guards ``_worker`` and ``_stopped`` for ``stop``, which does not wait for ``_lock``."""
        self.restarts = 0
        self.phases: list[tuple[str, float]] = []
        """The steps the last request finished in the worker, with seconds since it began there."""

    def __enter__(self) -> Analyzer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.kill()
                self._worker = None

    def stop(self) -> None:
        """End the worker and every process it started now, even while a request is running (that
        request then ends as a crash diagnostic); later requests start a new worker."""
        self._dry_runs.stop()
        with self._state_lock:
            self._stopped = True
            worker = self._worker
        if worker is not None:
            worker.process.kill()
        self.close()

    def warm(self) -> None:
        """Start the worker now and wait until it is ready and warm: it imports TileLang, then lowers kernels of
        its own (seconds; none without ``warm_up``), so the next analysis is timed as a warm worker's."""
        with self._lock:
            worker = self._ensure_worker(None)
            worker.request({"op": "ping", "warm": True}, time.monotonic() + WARM_S)

    def start(self) -> None:
        """Start the worker's process now without waiting for it: the first request waits for what is left
        of its start, within that request's own deadline (an editor opening its first file)."""
        with self._lock:
            self._spawn()

    def _spawn(self) -> WorkerLink:
        """The worker's process, started if there is none alive (not necessarily ready yet)."""
        if self._stopped:
            raise WorkerError("stopped", "the compiler tier was stopped")
        if self._worker is None or not self._worker.alive:
            if self._worker is not None:
                self._worker.kill()
                self.restarts += 1
            worker = WorkerLink(
                self.python,
                self.memory_mb,
                self.sandbox,
                self.workdir,
                gpu=self.gpu,
                sealed=self.sealed,
                warm_up=self.warm_up,
            )
            with self._state_lock:
                if self._stopped:
                    worker.kill()
                    raise WorkerError("stopped", "the compiler tier was stopped")
                self._worker = worker
        return self._worker

    def _ensure_worker(self, deadline: float | None) -> WorkerLink:
        """The ready worker, started if need be; past ``deadline`` a kept ``timeout`` while it still starts."""
        worker = self._spawn()
        try:
            worker.wait_ready(deadline)
        except WorkerError as err:
            if not err.kept:
                worker.kill()
                self._worker = None
            raise
        return worker

    def _call(
        self, payload: WorkerRequest, deadline: float, on_partial: Callable[[dict[str, Any]], None] | None = None
    ) -> tuple[Any, list[str]]:
        """The worker's result and notes on what user code did meanwhile, by ``deadline`` (monotonic)."""
        with self._lock:
            worker = self._ensure_worker(deadline)
            try:
                answer, notes = worker.request(dict(payload), deadline, on_partial)
            except WorkerError as err:
                self.phases = list(worker.phases)
                if err.kept and worker.alive:
                    raise  # only the request's child was lost: the warm worker serves the next request
                if err.code == "worker-crash":
                    tail = worker.last_words()
                    if tail:
                        err = WorkerError(err.code, f"{err} after printing: {' / '.join(tail)}")
                worker.kill()
                self._worker = None
                self.restarts += 1
                raise err from None
        self.phases = list(worker.phases)
        if not answer.get("ok"):
            raise RuntimeError(answer.get("error", "worker error"))
        return answer["result"], notes

    @staticmethod
    def _key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def analyze(
        self,
        path: str,
        source: str | None = None,
        *,
        target: str = "sm_90",
        kernel: str | None = None,
        args: dict[str, Any] | None = None,
        ptxas: bool = False,
        timeout_s: float | None = None,
        hazards_s: float = HAZARD_BUDGET_S,
        static: StaticFile | None = None,
        on_partial: Callable[[FileAnalysis], None] | None = None,
    ) -> FileAnalysis:
        """Analyse every kernel of a file (or one, by name) with the real compiler; ``hazards_s``
        seconds of interpretation per kernel look for races and bad accesses (0: none). ``static``: the
        static tier's analysis of ``source`` where the caller has it (the editor), not computed again.
        ``on_partial`` hears the analysis so far (the kernels done, and the next one's model without its
        hazard check while that runs), so an editor shows what it has before the last kernel's check ends.

        ``timeout_s`` (else the analyzer's) is wall-clock time per kernel; the first kernel's also covers
        what comes before it (the dry run, starting the worker). When the file's own top level did not
        finish loading in time, its other kernels report that at once rather than each waiting again."""
        started = min(time.monotonic(), self._clock_started or float("inf"))
        self._clock_started = None
        timeout = timeout_s or self.timeout_s
        path = str(Path(path).resolve()) if not path.startswith("<") else path
        if source is None:
            try:
                source = read_source(path)
            except SourceError as err:
                return file_only(path, target, [], diagnostic("io-error", Span(err.line), problem=str(err)))
        syntax = syntax_diagnostic(source, path)
        if syntax is not None:
            return file_only(path, target, [], syntax)
        problem = target_error(target)
        if problem:
            return file_only(path, target, discover(source, path), diagnostic("bad-target", Span(1), problem=problem))
        found = self._instantiations(
            source, path, target, started + timeout, static
        )  # once: the worker builds what it is sent
        discovered = [i.kernel for i in found]
        if not discovered:
            return file_only(path, target, [], NO_KERNELS)
        if kernel is not None:
            found = [i for i in found if i.kernel.name == kernel]
            if not found:
                missing = diagnostic("no-kernel", Span(line=1), name=kernel)
                return file_only(path, target, discovered, missing)
        kernels: list[KernelModel] = []
        file_diagnostics: list[Diagnostic] = []
        deadline = started + timeout
        unloaded: WorkerError | None = None
        """A timeout before the file's top level finished loading: every later kernel would wait on it again."""
        load_failed = False
        for index, inst in enumerate(found):
            payload: AnalyzeRequest = {
                "op": "analyze",
                "path": path,
                "source": source,
                "target": target,
                "kernel": inst.kernel.name,
                "instantiations": [to_json(inst)],  # recorded values included: a new recording misses the cache
                "args": args,
                "ptxas": ptxas,
                "hazards_s": hazards_s,
            }
            streamed = None
            if on_partial is not None:
                payload["stream"] = True
                done = FileAnalysis(path, target, list(kernels), discovered, list(file_diagnostics))
                streamed = _so_far(on_partial, done)
            if unloaded is not None:
                failure = worker_diagnostic(unloaded, inst.kernel, timeout)
                partial = failed(payload, inst.kernel, discovered, failure)
            elif load_failed:  # the file's diagnostic says why; its top level is not executed again
                model = KernelModel.unanalysed(inst.kernel.name, dict(inst.args), inst.target or target, [])
                partial = FileAnalysis(path, target, [model], discovered, [])
            else:
                partial, unloaded = self._analyze_one(payload, inst.kernel, discovered, deadline, timeout, streamed)
                load_failed = unloaded is None and any(name == "load-failed" for name, _ in self.phases)
            deadline = time.monotonic() + timeout
            kernels.extend(partial.kernels)
            file_diagnostics.extend(d for d in partial.diagnostics if d not in file_diagnostics)
            if on_partial is not None and index < len(found) - 1:
                on_partial(FileAnalysis(path, target, list(kernels), discovered, list(file_diagnostics)))
        return FileAnalysis(
            path=path, target=target, kernels=kernels, discovered=discovered, diagnostics=file_diagnostics
        )

    def _instantiations(
        self, source: str, path: str, target: str, deadline: float | None = None, static: StaticFile | None = None
    ) -> list[Instantiation]:
        """Discovery, with this analyzer's dry run (same interpreter and memory limit as its worker); a dry
        run in the foreground ends by ``deadline`` (the first kernel's), leaving the kernels their sizes' gaps."""
        if not self.dry_run or path.startswith("<"):
            return instantiations(source, path, static=static)
        return instantiations(source, path, self._dry_runs.source(path, target, deadline), static)

    def _analyze_one(
        self,
        payload: AnalyzeRequest,
        ref: KernelRef | None,
        discovered: list[KernelRef],
        deadline: float,
        timeout: float,
        on_partial: Callable[[dict[str, Any]], None] | None = None,
    ) -> tuple[FileAnalysis, WorkerError | None]:
        """The kernel's analysis by ``deadline``; with it, the timeout when it came before the file loaded."""
        key = self._key(payload)
        cached = self._cache.get(key)
        self.phases = []
        if cached is not None:
            self._cache.move_to_end(key)
            return FileAnalysis(payload["path"], payload["target"], [cached], discovered, []), None
        try:
            data, notes = self._call(payload, deadline, on_partial)
        except WorkerError as err:
            unloaded = err if err.code == "timeout" and err.phase in (None, "started", "worker-start") else None
            return failed(payload, ref, discovered, worker_diagnostic(err, ref, timeout)), unloaded
        except RuntimeError as err:
            return failed(payload, ref, discovered, internal_failure(err, ref)), None
        result = from_json(FileAnalysis, data)
        line, column = (ref.span.line, ref.span.column) if ref else (1, 0)
        for note in notes:
            where = Span(line, column)
            kernel = ref.name if ref else None
            form = None if kernel else "file"
            result.diagnostics.append(diagnostic("supervised", where, form=form, kernel=kernel, note=note))
        if len(result.kernels) == 1 and not result.diagnostics:
            self._cache[key] = result.kernels[0]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result, None

    def run(
        self,
        path: str,
        source: str | None = None,
        *,
        kernel: str | None = None,
        args: dict[str, Any] | None = None,
        inputs: str | None = None,
        compare: str | None = None,
        seed: int = 0,
        timeout_s: float | None = None,
    ) -> RunReport:
        """Interpret one kernel of a file on the CPU in the worker (``tilescope.core.interpret``)."""
        try:
            path, source = _file(path, source)
        except SourceError as err:
            return RunReport(kernel or "", args or {}, [], [], 0.0, error=str(err), line=err.line)
        payload: RunRequest = {
            "op": "run",
            "path": path,
            "source": source,
            "kernel": kernel,
            "args": args,
            "inputs": inputs,
            "compare": compare,
            "seed": seed,
        }
        timeout = timeout_s or self.timeout_s
        try:
            data, _ = self._call(payload, time.monotonic() + timeout)
            return from_json(RunReport, data)
        except (WorkerError, RuntimeError) as err:
            return run_failure(err, kernel, args, timeout)

    def profile(self, payload: dict[str, Any], timeout_s: float | None = None) -> Timing:
        """Time one kernel on this machine's GPU in the worker (``tilescope.core.worker.gpu_run``)."""
        request: ProfileRequest = {
            "op": "profile",
            "path": payload["path"],
            "source": payload["source"],
            "instantiation": payload["instantiation"],
            "args": payload["args"],
            "warmup": payload["warmup"],
            "runs": payload["runs"],
        }
        try:
            data, _ = self._call(request, time.monotonic() + (timeout_s or self.timeout_s))
        except (WorkerError, RuntimeError) as err:
            return Timing(gpu="", arch="", time_us=0.0, times_us=[], warmup=0, error=str(err))
        return from_json(Timing, data)

    def pass_ir(
        self,
        path: str,
        source: str | None = None,
        *,
        kernel: str,
        index: int,
        target: str = "sm_90",
        args: dict[str, Any] | None = None,
    ) -> IRText:
        """The IR after pass ``index`` (``-1``: before the first pass), printed on demand."""
        (text,) = self.pass_irs(path, source, kernel=kernel, indices=[index], target=target, args=args)
        return text

    def pass_irs(
        self,
        path: str,
        source: str | None = None,
        *,
        kernel: str,
        indices: Sequence[int],
        target: str = "sm_90",
        args: dict[str, Any] | None = None,
    ) -> list[IRText]:
        """The IR after each pass of ``indices``, in that order, printed from one lowering: each request lowers
        the kernel again (about half a second for a GEMM), so a diff asks for its two passes together and a
        whole trace for all of them."""
        path, source = _file(path, source)
        payload: PassIRRequest = {
            "op": "pass_ir",
            "path": path,
            "source": source,
            "target": target,
            "kernel": kernel,
            "instantiations": [
                to_json(i) for i in self._instantiations(source, path, target) if i.kernel.name == kernel
            ],
            "args": args,
            "indices": list(indices),
        }
        data, _ = self._call(payload, time.monotonic() + self.timeout_s)
        texts = [from_json(IRText, text) for text in data["texts"]]
        if len(texts) != len(payload["indices"]):
            raise RuntimeError(f"the worker printed {len(texts)} passes of the {len(payload['indices'])} asked for")
        return texts


def _so_far(on_partial: Callable[[FileAnalysis], None], done: FileAnalysis) -> Callable[[dict[str, Any]], None]:
    """What hears the worker's analysis so far of one kernel: ``on_partial`` with it after the kernels ``done``.
    A partial answer that does not read as an analysis is not passed on (the confirmed answer follows)."""

    def heard(data: dict[str, Any]) -> None:
        try:
            partial = from_json(FileAnalysis, data)
        except Exception:
            return
        said = [*done.diagnostics, *(d for d in partial.diagnostics if d not in done.diagnostics)]
        on_partial(FileAnalysis(done.path, done.target, [*done.kernels, *partial.kernels], done.discovered, said))

    return heard


def _file(path: str, source: str | None) -> tuple[str, str]:
    """The absolute path (a ``<name>`` as given) and the text: ``source``, or the file's."""
    path = str(Path(path).resolve()) if not path.startswith("<") else path
    return path, read_source(path) if source is None else source

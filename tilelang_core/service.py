"""``Analyzer``: the compiler tier as a service, backed by a warm, supervised worker process.

User code runs only in the worker. Each kernel is a separate request with its own timeout, so a
kernel that hangs, exits the process or exhausts its memory limit becomes a diagnostic on that
kernel's line; the worker is restarted on the next request and the caller never sees an exception.
Results are cached by (source hash, path, kernel, arguments, target).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import selectors
import subprocess
import sys
import threading
import time
from collections import OrderedDict, deque
from pathlib import Path
from typing import Any

from tilescope.core.discovery import discover, instantiations, syntax_diagnostic
from tilescope.core.environment import gpu_message
from tilescope.core.model import Diagnostic, FileAnalysis, IRText, KernelModel, KernelRef, Span, from_json
from tilescope.core.record import stamp
from tilescope.core.spawn import worker_command, worker_env
from tilescope.core.targets import target_error

START_TIMEOUT_S = 120.0


class WorkerError(Exception):
    """The worker died or stopped answering; ``code`` names which for the diagnostic."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _limit_memory(megabytes: int) -> None:
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class _Worker:
    """One worker process and its pipes; not thread-safe (``Analyzer`` serialises access)."""

    def __init__(self, python: str, memory_mb: int) -> None:
        env = {**worker_env(os.environ), "PYTHONUNBUFFERED": "1", "TILELANG_ENABLE_IR_SPAN": "1"}
        self.process = subprocess.Popen(
            worker_command(python),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            preexec_fn=(lambda: _limit_memory(memory_mb)) if memory_mb > 0 else None,
            start_new_session=True,
        )
        self.stderr_tail: deque[str] = deque(maxlen=60)
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        self._selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self._buffer = b""
        try:
            ready = self.read(START_TIMEOUT_S)
        except WorkerError as err:
            self.kill()
            self._drainer.join(timeout=2)
            tail = [ln for ln in self.stderr_tail if ln.strip()][-3:]
            printed = f"; it printed: {' / '.join(tail)}" if tail else ""
            raise WorkerError(
                "worker-start", f"The compiler worker could not start in {python} ({err}){printed}"
            ) from None
        if not ready.get("ready"):
            self.kill()
            raise WorkerError(ready.get("code", "worker-start"), f"{ready.get('error')} (interpreter {python})")

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_tail.append(line.decode(errors="replace").rstrip())

    def read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerError("timeout", f"no answer within {timeout:g} s")
            if not self._selector.select(remaining):
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self.process.wait(timeout=5)
                raise WorkerError("worker-crash", f"the worker process exited with code {code}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def request(self, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(payload) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise WorkerError("worker-crash", f"the worker process is gone ({err})") from err
        return self.read(timeout)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        self._selector.close()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


class Analyzer:
    """Thread-safe front of the compiler tier. Never raises for bad user input."""

    def __init__(
        self,
        timeout_s: float = 60.0,
        memory_mb: int = 6144,
        python: str | None = None,
        cache_size: int = 64,
    ) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.python = python or sys.executable
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._cache: OrderedDict[str, KernelModel] = OrderedDict()
        self._cache_size = cache_size
        self.restarts = 0

    def __enter__(self) -> Analyzer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.kill()
                self._worker = None

    def warm(self) -> None:
        """Start the worker now rather than on the first request (it imports TileLang: seconds)."""
        with self._lock:
            self._ensure_worker()

    def _ensure_worker(self) -> _Worker:
        if self._worker is None or not self._worker.alive:
            if self._worker is not None:
                self._worker.kill()
                self.restarts += 1
            self._worker = _Worker(self.python, self.memory_mb)
        return self._worker

    def _call(self, payload: dict[str, Any], timeout: float) -> Any:
        with self._lock:
            worker = self._ensure_worker()
            try:
                answer = worker.request(payload, timeout)
            except WorkerError as err:
                if err.code == "worker-crash":
                    worker._drainer.join(timeout=2)  # its last words may still be in the pipe
                    tail = [ln for ln in worker.stderr_tail if ln.strip()][-3:]
                    if tail:
                        err = WorkerError(err.code, f"{err} after printing: {' / '.join(tail)}")
                worker.kill()
                self._worker = None
                self.restarts += 1
                raise err from None
        if not answer.get("ok"):
            raise RuntimeError(answer.get("error", "worker error"))
        return answer["result"]

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
    ) -> FileAnalysis:
        """Analyse every kernel of a file (or one, by name) with the real compiler."""
        path = str(Path(path).resolve()) if not path.startswith("<") else path
        if source is None:
            try:
                source = Path(path).read_text()
            except OSError as err:
                return _file_only(
                    path, target, [], Diagnostic("error", f"Cannot read file: {err}", Span(1), "io-error")
                )
        syntax = syntax_diagnostic(source, path)
        if syntax is not None:
            return _file_only(path, target, [], syntax)
        problem = target_error(target)
        if problem:
            return _file_only(path, target, discover(source, path), Diagnostic("error", problem, Span(1), "bad-target"))
        found = instantiations(source, path)
        discovered = [i.kernel for i in found]
        if kernel is not None:
            found = [i for i in found if i.kernel.name == kernel]
        if not found:
            payload = {"op": "analyze", "path": path, "source": source, "target": target, "kernel": kernel}
            return self._analyze_one(payload, None, discovered, timeout_s)
        kernels: list[KernelModel] = []
        file_diagnostics: list[Diagnostic] = []
        for inst in found:
            payload = {
                "op": "analyze",
                "path": path,
                "source": source,
                "target": target,
                "kernel": inst.kernel.name,
                "args": args,
                "ptxas": ptxas,
                "recorded": stamp(path),  # recorded instances are an argument source: a new recording misses the cache
            }
            partial = self._analyze_one(payload, inst.kernel, discovered, timeout_s)
            kernels.extend(partial.kernels)
            file_diagnostics.extend(d for d in partial.diagnostics if d not in file_diagnostics)
        return FileAnalysis(
            path=path, target=target, kernels=kernels, discovered=discovered, diagnostics=file_diagnostics
        )

    def _analyze_one(
        self,
        payload: dict[str, Any],
        ref: KernelRef | None,
        discovered: list[KernelRef],
        timeout_s: float | None,
    ) -> FileAnalysis:
        key = self._key(payload)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return FileAnalysis(payload["path"], payload["target"], [cached], discovered, [])
        timeout = timeout_s or self.timeout_s
        try:
            result = from_json(FileAnalysis, self._call(payload, timeout))
        except WorkerError as err:
            return _file_only(payload["path"], payload["target"], discovered, _worker_diagnostic(err, ref, timeout))
        except RuntimeError as err:
            line = ref.span.line if ref else 1
            return _file_only(
                payload["path"],
                payload["target"],
                discovered,
                Diagnostic("error", str(err), Span(line), "internal-error"),
            )
        if len(result.kernels) == 1 and not result.diagnostics:
            self._cache[key] = result.kernels[0]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return result

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
        path = str(Path(path).resolve()) if not path.startswith("<") else path
        source = Path(path).read_text() if source is None else source
        payload = {
            "op": "pass_ir",
            "path": path,
            "source": source,
            "target": target,
            "kernel": kernel,
            "args": args,
            "index": index,
        }
        data = self._call(payload, self.timeout_s)
        return IRText(text=data["text"], source_lines=data["source_lines"])


def _file_only(path: str, target: str, discovered: list[KernelRef], diagnostic: Diagnostic) -> FileAnalysis:
    return FileAnalysis(path=path, target=target, kernels=[], discovered=discovered, diagnostics=[diagnostic])


def _worker_diagnostic(err: WorkerError, ref: KernelRef | None, timeout: float) -> Diagnostic:
    name = ref.name if ref else "the file"
    span = ref.span if ref else Span(1)
    if err.code == "worker-crash" and gpu_message(str(err)):
        return Diagnostic(
            "warning",
            f"Building kernel '{name}' ended the compiler worker because it asked for a GPU ({err}), and analysis "
            "runs without one. Give the values it needs in a '# tilescope: NAME=VALUE' directive above the def, or "
            "record a real run with 'tilescope record -- python FILE' on a GPU machine",
            Span(span.line, span.column),
            "needs-gpu",
            kernel=ref.name if ref else None,
        )
    if err.code not in ("timeout", "worker-crash"):
        return Diagnostic("error", str(err), Span(span.line, span.column), err.code, kernel=ref.name if ref else None)
    if err.code == "timeout":
        message = (
            f"Analysing kernel '{name}' did not finish within {timeout:g} s: building it may loop forever "
            "(the analysis was stopped and the worker restarted)"
        )
    else:
        message = (
            f"The compiler worker died while building kernel '{name}' ({err}); it may have exited the process, "
            "crashed in native code or exceeded its memory limit. The worker was restarted."
        )
    return Diagnostic("error", message, Span(span.line, span.column), err.code, kernel=ref.name if ref else None)

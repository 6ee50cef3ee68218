"""The worker process: owns TileLang, runs user code, answers framed JSON requests one at a time.

It is started by ``tilescope.core.compiler.service.Analyzer`` behind ``tilescope.core.sandbox.supervise``. Requests
arrive as JSON lines on a private copy of stdin; answers leave as frames (``tilescope.core.sandbox.frames``)
on a private copy of stdout. Fd 0 is then pointed at ``/dev/null`` and fd 1 at stderr, so whatever
user code reads, prints or closes there can never reach the protocol; if user code damages the
private channels themselves, the answer says so (or the worker exits) before another file is blamed.

After each request the answer also lists what user code left behind (``leftovers``: threads still
running, trace hooks; and whether stdio changed); only when that list is empty does the worker wait for the
caller's secret and confirm its answer with it (``frames``), so a leftover thread can neither read
the secret nor make its forged frames count. The caller replaces a worker that left anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import traceback
from collections import OrderedDict
from typing import Any, BinaryIO, cast

from tilescope.core.compat import releases
from tilescope.core.model import from_json, to_json
from tilescope.core.protocol import AnalyzeRequest, PassIRRequest, ProfileRequest, RunRequest, WorkerRequest
from tilescope.core.sandbox.frames import (
    CHANNEL_DAMAGED_EXIT,
    channel_damage,
    channel_fingerprint,
    digest,
    encode,
    write_all,
)

_CACHE_SIZE = 8


def _channels() -> tuple[BinaryIO, int]:
    """Private copies of stdin and stdout for the protocol; fds 0 and 1 are left to user code."""
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull)  # noqa: SIM115  (lives as long as the process)
    sys.stdout = sys.stderr
    return requests, replies


class Worker:
    def __init__(self) -> None:
        import tilelang  # noqa: F401  (warm the import: it is most of the start-up cost)
        from tilescope.core.compiler.discovery import Instantiation
        from tilescope.core.worker import analysis, autotune, ir_text

        autotune.guard()

        self._analysis = analysis
        self._ir_text = ir_text
        self._instantiation = Instantiation
        self._runs: OrderedDict[str, dict[str, Any]] = OrderedDict()

    @staticmethod
    def key(request: AnalyzeRequest | PassIRRequest) -> str:
        """What a lowering depends on; the instantiations carry recorded values, so a re-recording misses."""
        parts = [
            request["path"],
            request["source"],
            request["target"],
            request["args"] or {},
            request["instantiations"],
        ]
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def analyze(self, request: AnalyzeRequest) -> dict[str, Any]:
        """Build and lower the instantiations the parent computed; the worker never re-runs discovery."""
        found = [from_json(self._instantiation, i) for i in request["instantiations"]]
        result, runs = self._analysis.analyze_file(
            request["path"],
            request["source"],
            found,
            target=request["target"],
            args=request["args"],
            with_ptxas=request["ptxas"],
            hazards_s=float(request.get("hazards_s", 0.0)),
        )
        key = self.key(request)
        self._runs[key] = {**self._runs.get(key, {}), **runs}
        self._runs.move_to_end(key)
        while len(self._runs) > _CACHE_SIZE:
            self._runs.popitem(last=False)
        return to_json(result)

    def pass_ir(self, request: PassIRRequest) -> dict[str, Any]:
        kernel = request["kernel"]
        runs = self._runs.get(self.key(request), {})
        if kernel not in runs:
            self.analyze(
                {
                    "op": "analyze",
                    "path": request["path"],
                    "source": request["source"],
                    "target": request["target"],
                    "kernel": kernel,
                    "instantiations": request["instantiations"],
                    "args": request["args"],
                    "ptxas": False,
                    "hazards_s": 0.0,
                }
            )
            runs = self._runs.get(self.key(request), {})
        run = runs.get(kernel)
        if run is None or run.lowered is None:
            raise LookupError(f"kernel '{kernel}' did not lower, so it has no pass IR")
        index = request["index"]
        lowered = run.lowered
        if index == -1:
            mod = lowered.initial
        elif 0 <= index < len(lowered.modules):
            mod = lowered.modules[index]
        else:
            raise IndexError(f"pass index {index} out of range (0..{len(lowered.modules) - 1})")
        return to_json(self._ir_text.render(mod, request["path"]))

    def run(self, request: RunRequest) -> dict[str, Any]:
        """Interpret one kernel on the CPU (``tilescope run``)."""
        from tilescope.core.interpret.launch import run_file

        report = run_file(
            request["path"],
            request["source"],
            kernel=request["kernel"],
            args=request["args"],
            inputs=request["inputs"],
            compare=request["compare"],
            seed=request["seed"],
        )
        return to_json(report)

    def profile(self, request: ProfileRequest) -> dict[str, Any]:
        """Build one kernel for this machine's GPU and time it (``tilescope profile``)."""
        from tilescope.core.worker import gpu_run

        return to_json(gpu_run.profile(request))

    def handle(self, request: WorkerRequest) -> Any:
        if request["op"] == "ping":
            return {"pid": os.getpid()}
        if request["op"] == "run":
            return self.run(request)
        if request["op"] == "analyze":
            return self.analyze(request)
        if request["op"] == "pass_ir":
            return self.pass_ir(request)
        if request["op"] == "profile":
            return self.profile(request)
        raise ValueError(f"unknown request {request['op']!r}")


def _start() -> tuple[Worker | None, dict[str, Any]]:
    """The worker, or why it cannot run here: checked before TileLang is imported, which may fail."""
    version = releases.installed_version()
    problem = releases.problem(version)
    if problem:
        return None, {"ready": False, "code": "tilelang-version", "error": problem}
    try:
        worker = Worker()
    except Exception as err:
        error = f"{type(err).__name__}: {err}"
        return None, {"ready": False, "code": "tilelang-import", "error": error, "version": version}
    return worker, {"ready": True, "pid": os.getpid(), "tilelang": version}


class Baseline:
    """What the worker looks like between requests, to notice what a build left behind."""

    def __init__(self) -> None:
        self.threads = set(sys._current_frames())
        self.stdio = channel_fingerprint((0, 1, 2))
        self.streams = (sys.stdin, sys.stdout, sys.stderr)

    def leftovers(self) -> list[str]:
        """What user code left that could still act: threads still running, trace or profile hooks."""
        found = []
        extra = [t for t in sys._current_frames() if t not in self.threads]
        if extra:
            names = {t.ident: t.name for t in threading.enumerate()}
            listed = ", ".join(names.get(t, f"thread {t}") for t in extra[:4])
            found.append(f"{len(extra)} thread(s) still running ({listed})")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append("a trace or profile hook still set")
        return found

    def stdio_changed(self) -> bool:
        """Whether user code closed or replaced stdin, stdout or stderr (harmless, but not as started)."""
        return channel_fingerprint((0, 1, 2)) != self.stdio or (sys.stdin, sys.stdout, sys.stderr) != self.streams


def main() -> None:
    requests, replies = _channels()
    channels = (requests.fileno(), replies)
    fingerprint = channel_fingerprint(channels)
    worker, hello = _start()
    write_all(replies, encode(None, hello))
    if worker is None:
        return
    baseline = Baseline()
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # a secret the caller sent for an answer this worker did not confirm
        if not isinstance(request, dict):
            continue
        try:
            # The service's JSON, not checked field by field here: ``handle`` refuses an unknown ``op``.
            answer = {"id": request.get("id"), "ok": True, "result": worker.handle(cast(WorkerRequest, request))}
        except (Exception, SystemExit) as err:  # user code's sys.exit() ends a request, never the worker
            answer = {
                "id": request.get("id"),
                "ok": False,
                "error": f"{type(err).__name__}: {err}",
                "detail": traceback.format_exc()[-4000:],
            }
        damage = channel_damage(channels, fingerprint)
        if damage is not None:
            print(f"tilescope worker: {damage}", file=sys.stderr, flush=True)
            answer["fatal"] = damage
        answer["left"] = baseline.leftovers()
        answer["changed"] = baseline.stdio_changed()
        frame = encode(request.get("id"), answer)
        try:
            write_all(replies, frame)
        except OSError:
            os._exit(CHANNEL_DAMAGED_EXIT)
        if damage is not None:
            os._exit(CHANNEL_DAMAGED_EXIT)
        if not answer["left"]:
            _confirm(requests, replies, request.get("id"), frame)


def _confirm(requests: BinaryIO, replies: int, request_id: int | None, frame: bytes) -> None:
    """Read the caller's secret for this answer (sent only now) and confirm the answer with it."""
    secret = requests.readline().decode(errors="replace").strip()
    body = frame[frame.index(b"\n") + 1 : -1]
    try:
        write_all(replies, encode(request_id, {"confirm": digest(body)}, tag=secret or "?"))
    except OSError:
        os._exit(CHANNEL_DAMAGED_EXIT)


if __name__ == "__main__":
    main()

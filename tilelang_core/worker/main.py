"""The worker process: a warm zygote that owns TileLang and forks one child per request.

It is started by ``tilescope.core.compiler.service.Analyzer`` behind ``tilescope.core.sandbox.supervise``. Requests
arrive as JSON lines on a private copy of stdin; answers leave as frames (``tilescope.core.sandbox.frames``)
on a private copy of stdout. Fd 0 is then pointed at ``/dev/null`` and fd 1 at stderr.

The zygote imports TileLang and warms it on a kernel of its own, and never runs user code: for each
request it forks a child, which closes the zygote's channels, loads the user's file, answers over a
pipe of its own and is ended. Whatever user code changes (patched modules, globals, import hooks,
threads) dies with the child, so one analysis can never shape the next one's answer, and the next
request starts from the warm zygote instead of a fresh interpreter. The zygote holds no thread but
its main one when it forks (``_single_threaded``): a native pool started before a fork would be
half-copied into the child.

Towards the child the zygote plays the part the caller once played towards the whole worker: a
child's answer stands only once the child confirms it with a secret drawn after the fork, and only
when the child reported nothing left running (``leftovers``); the zygote ends the child at the
request's deadline (``deadline_s``, the caller's wall clock) and says which phase it had reached.
Signals user code sends its parent (the zygote) are recorded and reported, not obeyed; the zygote is
not dumpable and each child is put in a Landlock domain of its own (``landlock.apart``), so a child
cannot read or write the zygote's memory or descriptors through ``/proc`` or ptrace, even as root.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.util
import json
import os
import secrets
import select
import signal
import sys
import threading
import time
import traceback
from collections import OrderedDict
from typing import Any, BinaryIO, NoReturn, cast

from tilescope.core.compat import releases
from tilescope.core.model import from_json, to_json
from tilescope.core.protocol import AnalyzeRequest, PassIRRequest, ProfileRequest, RunRequest, WorkerRequest
from tilescope.core.sandbox import landlock
from tilescope.core.sandbox.frames import (
    CHANNEL_DAMAGED_EXIT,
    UNCONFIRMED,
    FrameReader,
    channel_damage,
    channel_fingerprint,
    digest,
    encode,
    write_all,
)

_CACHE_SIZE = 32
"""Answers to ``pass_ir`` the zygote keeps (the bytes a child sent): stepping through passes rebuilds once."""
_PRINTED_BYTES = 4096
"""How much of a child's last stderr output the zygote keeps, to say what a child that died printed."""
_CONFIRM_S = 10.0
"""How long a child may take to confirm its answer (it reads a line and writes a frame)."""
_RECORDED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
"""Signals a child may send its parent, the zygote: recorded and reported, never obeyed."""
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
"""Set before anything is imported: OpenBLAS (numpy) and OpenMP (a lowering) would otherwise start pools
in the zygote, which must hold one thread when it forks."""
_PR_SET_DUMPABLE = 4

WARM_UP_PATH = "<tilescope-warm-up>"
WARM_UP_SOURCE = """
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def warm_up(M=256, N=256, K=256, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
"""
"""Tilescope's own kernel, analysed once in the zygote so each child starts with TileLang's lazy state warm."""
ASCEND_WARM_UP_PATH = "<tilescope-ascend-warm-up>"
ASCEND_WARM_UP_SOURCE = """
import tilelang.ascend.language as T


def ascend_warm_up(M=128, N=128, K=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(4) as bx:
            A_l1 = T.alloc_l1((block, block), "bfloat16")
            B_l1 = T.alloc_l1((block, block), "bfloat16")
            C_l0c = T.alloc_l0c((block, block), "float32")
            C_ub = T.alloc_shared((block // 2, block), "float32")
            m, n = bx // 2 * block, bx % 2 * block
            for k in T.Pipelined(K // block, num_stages=2):
                T.copy(A[m, k * block], A_l1)
                T.copy(B[n, k * block], B_l1)
                T.gemm(A_l1, B_l1, C_l0c, transpose_B=True, clear_accum=(k == 0))
            T.dual_copy(C_l0c, C_ub)
            with T.SimtVF(threads=64):
                for i, j in T.Parallel(block // 2, block):
                    C_ub[i, j] = T.max(C_ub[i, j], 0)
            T.dual_copy(C_ub, C[m : m + block, n : n + block])

    return main


ascend_warm_up()
"""
"""An Ascend kernel of Tilescope's own (Cube, Vector, a SimtVF region), analysed once in the zygote where the
release has the Ascend backend: each child then starts with its modules imported and its passes warm."""


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


def _dumpable(on: bool) -> None:
    """Whether processes of the same user may read this one's memory and descriptors (``/proc``, ptrace)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, int(on), 0, 0, 0)


def thread_count() -> int:
    """Threads of this process, native ones included (``threading`` sees only Python's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


class Worker:
    """The requests a child answers; made once in the zygote, so every child starts with the imports done."""

    def __init__(self) -> None:
        import tilelang  # noqa: F401  (warm the import: it is most of the start-up cost)
        from tilescope.core.compiler.discovery import Instantiation, instantiations
        from tilescope.core.interpret.hazards import check  # noqa: F401  (imported once, not in every child)
        from tilescope.core.worker import analysis, autotune, ir_text

        autotune.guard()

        self._analysis = analysis
        self._ir_text = ir_text
        self._instantiation = Instantiation
        self._runs: dict[str, dict[str, Any]] = {}
        """A child's lowerings by request key, for ``pass_ir`` (it analyses first, then prints one pass)."""
        found = instantiations(WARM_UP_SOURCE, WARM_UP_PATH)
        analysis.analyze_file(WARM_UP_PATH, WARM_UP_SOURCE, found, hazards_s=0.2)
        if importlib.util.find_spec("tilelang.ascend") is not None:
            found = instantiations(ASCEND_WARM_UP_SOURCE, ASCEND_WARM_UP_PATH)
            analysis.analyze_file(ASCEND_WARM_UP_PATH, ASCEND_WARM_UP_SOURCE, found, hazards_s=0)

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

    def analyze(self, request: AnalyzeRequest, on_phase: Any = None) -> dict[str, Any]:
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
            on_phase=on_phase,
        )
        self._runs[self.key(request)] = runs
        return to_json(result)

    def pass_ir(self, request: PassIRRequest) -> dict[str, Any]:
        kernel = request["kernel"]
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
        run = self._runs.get(self.key(request), {}).get(kernel)
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
            choose=lambda inst: self._tuned_choice(request, inst),
        )
        return to_json(report)

    def _tuned_choice(self, request: RunRequest, inst: Any) -> Any:
        """The config the compiler tier analyses for an ``@autotune`` kernel (lowering configs until
        one fits), so ``run`` interprets the kernel ``check`` describes."""
        _, runs = self._analysis.analyze_file(request["path"], request["source"], [inst])
        run = runs.get(inst.kernel.name)
        return run.model.autotune if run is not None else None

    def profile(self, request: ProfileRequest) -> dict[str, Any]:
        """Build one kernel for this machine's GPU and time it (``tilescope profile``)."""
        from tilescope.core.worker import gpu_run

        return to_json(gpu_run.profile(request))

    def handle(self, request: WorkerRequest, on_phase: Any = None) -> Any:
        if request["op"] == "run":
            return self.run(request)
        if request["op"] == "analyze":
            return self.analyze(request, on_phase)
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
    return worker, {"ready": True, "pid": os.getpid(), "tilelang": version, "threads": thread_count()}


class Baseline:
    """What the child looks like before user code runs, to notice what a build left behind."""

    def __init__(self) -> None:
        self.threads = set(sys._current_frames())

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


class Zygote:
    """The warm parent: forks a child per request, watches it, answers for it and ends it."""

    def __init__(self, worker: Worker, requests: BinaryIO, replies: int) -> None:
        self.worker = worker
        self.requests = requests
        self.replies = replies
        self.signals: list[str] = []
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        for name in _RECORDED:
            signal.signal(getattr(signal, name), self._record)

    def _record(self, number: int, _frame: object) -> None:
        name = signal.Signals(number).name
        if name not in self.signals:
            self.signals.append(name)

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (``id``, ``ok``, ``result`` or ``error``, and what the child did)."""
        ident = request.get("id")
        if request.get("op") == "ping":
            return {"id": ident, "ok": True, "result": {"pid": os.getpid(), "threads": thread_count()}}
        deadline = time.monotonic() + float(request.pop("deadline_s", 3600.0))
        key = _cache_key(request) if request.get("op") == "pass_ir" else None
        if key is not None and key in self._cache:
            self._cache.move_to_end(key)
            return {**json.loads(self._cache[key]), "id": ident}
        self.signals.clear()
        answer = self._fork(request, deadline)
        answer["signals"] = list(self.signals)
        if key is not None and answer.get("ok") and not answer.get("notes") and not self.signals:
            self._cache[key] = json.dumps({k: answer[k] for k in ("ok", "result")}).encode()
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return {**answer, "id": ident}

    def _fork(self, request: dict[str, Any], deadline: float) -> dict[str, Any]:
        threads = thread_count()
        if threads != 1:
            # Never fork with another thread alive: it could hold a lock the child then waits on forever.
            return {"ok": False, "error": f"the compiler worker holds {threads} threads, so it cannot fork"}
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.dup2(err_w, 2)
            closed = (self.requests.fileno(), self.replies, down_w, up_r, err_r, err_w)
            _child(self.worker, request, down_r, up_w, closed)
        os.close(down_r)
        os.close(up_w)
        os.close(err_w)
        try:
            return _Watch(pid, request.get("id"), up_r, down_w, err_r, deadline).answer()
        finally:
            os.close(up_r)
            os.close(down_w)
            os.close(err_r)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _cache_key(request: dict[str, Any]) -> str:
    parts = {k: v for k, v in request.items() if k != "id"}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class _Watch:
    """The zygote's side of one child: its frames, its deadline, its confirmation, its end."""

    def __init__(self, pid: int, ident: Any, up: int, down: int, err: int, deadline: float) -> None:
        self.pid = pid
        self.ident = ident
        self.up = up
        self.down = down
        self.err = err
        """The child's stderr: passed on to the zygote's (the caller shows it), its last lines kept for a crash."""
        self.printed = b""
        self.err_open = True
        self.deadline = deadline
        self.frames = FrameReader()
        self.phases: list[tuple[str, float]] = []
        self.started = time.monotonic()
        self.exit: int | None = None

    def answer(self) -> dict[str, Any]:
        answer = self._read(UNCONFIRMED, self.deadline)
        if isinstance(answer, str):
            return self._failed(answer)
        body = self.frames.body
        if not answer.get("left") and not answer.get("fatal"):
            secret = secrets.token_hex(16)  # drawn after the fork: the child's memory never held it
            try:
                write_all(self.down, (secret + "\n").encode())
            except OSError:
                return self._failed("eof")
            confirmed = self._read(secret, min(self.deadline, time.monotonic() + _CONFIRM_S))
            if isinstance(confirmed, str) or confirmed.get("confirm") != digest(body):
                self.frames.take_noise()
                forged = "the answer read was not the child's: frames on its reply channel were forged"
                return {"ok": False, "fatal": forged, "phases": self.phases}
        notes = []
        noise = self.frames.take_noise()
        held = self.frames.pending()
        if held:
            noise = f"{noise} and " if noise else ""
            noise += f"an unfinished frame ({held} bytes)"
        if noise:
            notes.append(f"user code wrote into the compiler's private reply channel: {noise} were discarded")
        return {**answer, "notes": notes, "phases": self.phases}

    def _read(self, tag: str, until: float) -> dict[str, Any] | str:
        """The child's frame with ``tag`` (phase frames noted on the way), else ``"timeout"`` or ``"eof"``."""
        while True:
            while (frame := self.frames.next(self.ident, tag)) is not None:
                if "phase" in frame:
                    self.phases.append((str(frame["phase"]), round(time.monotonic() - self.started, 4)))
                    continue
                return frame
            remaining = until - time.monotonic()
            if remaining <= 0:
                return "timeout"
            watched = [self.up, self.err] if self.err_open else [self.up]
            readable, _, _ = select.select(watched, [], [], remaining)
            if self.err in readable:
                self.err_open = self._stderr()
            if self.up not in readable:
                continue
            chunk = os.read(self.up, 1 << 20)
            if not chunk:
                return "eof"
            self.frames.feed(chunk)

    def _stderr(self) -> bool:
        """Pass on what the child printed; whether there was anything (not the end of its stderr)."""
        chunk = os.read(self.err, 1 << 16)
        if chunk:
            with contextlib.suppress(OSError):
                write_all(2, chunk)
            self.printed = (self.printed + chunk)[-_PRINTED_BYTES:]
        return bool(chunk)

    def _captured(self) -> None:
        """What the child had captured of fd 2 when it ended (``compiler_warnings.captured_stderr``, which a
        child that calls ``os._exit`` never finishes): passed on and kept, as if printed."""
        from tilescope.core.worker.compiler_warnings import capture_path

        path = capture_path(self.pid)
        try:
            with open(path, "rb") as held:
                chunk = held.read()[-_PRINTED_BYTES:]
            os.remove(path)
        except OSError:
            return
        if chunk:
            with contextlib.suppress(OSError):
                write_all(2, chunk)
            self.printed = (self.printed + chunk)[-_PRINTED_BYTES:]

    def _failed(self, why: str) -> dict[str, Any]:
        """No answer: the deadline passed (the child is ended), or the child closed its channel or died."""
        phase = self.phases[-1][0] if self.phases else "started"
        if why == "timeout":
            self._captured()  # the child is ended at the deadline, perhaps inside a capture
            return {"ok": False, "timeout": True, "phase": phase, "phases": self.phases}
        code = _exit_code(self.pid, self.deadline)
        for _ in range(64):  # what it printed last; a process it left could print forever
            if not self.err_open or not select.select([self.err], [], [], 0)[0]:
                break
            self.err_open = self._stderr()
        self._captured()
        lines = [ln for ln in self.printed.decode(errors="replace").splitlines() if ln.strip()][-3:]
        crash = _exit_description(code) + (f" after printing: {' / '.join(lines)}" if lines else "")
        return {"ok": False, "crash": crash, "phase": phase, "phases": self.phases}


def _exit_code(pid: int, deadline: float) -> int | None:
    """The child's exit code (``-n``: signal ``n``) once it has exited, waiting at most until ``deadline``."""
    limit = max(min(deadline, time.monotonic() + 5), time.monotonic() + 0.5)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= limit:
            return None
        time.sleep(0.01)


def _exit_description(code: int | None) -> str:
    if code is None:
        return "closed its reply channel"
    if code == CHANNEL_DAMAGED_EXIT:
        return "stopped: user code closed or replaced its private protocol descriptors"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was ended by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _child(worker: Worker, request: dict[str, Any], down: int, up: int, closed: tuple[int, ...]) -> NoReturn:
    """In the forked child: drop the zygote's channels, answer ``request`` over ``up`` and exit."""
    code = 0
    try:
        for fd in closed:
            os.close(fd)
        _dumpable(True)  # the child's own processes stay findable by their tree's token (``supervise``)
        with contextlib.suppress(OSError):
            landlock.apart()  # root ignores "not dumpable": a domain of its own keeps it out of the zygote
        for name in _RECORDED:
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        code = _answer(worker, request, os.fdopen(down, "rb"), up)
    except BaseException:  # nothing may return into the zygote's loop
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


def _answer(worker: Worker, request: dict[str, Any], requests: BinaryIO, up: int) -> int:
    """The old worker's loop body, for one request: answer, then confirm with the zygote's secret."""
    channels = (requests.fileno(), up)
    fingerprint = channel_fingerprint(channels)
    baseline = Baseline()
    ident = request.get("id")

    def on_phase(name: str) -> None:
        with contextlib.suppress(OSError):
            write_all(up, encode(ident, {"phase": name}))

    try:
        # The service's JSON, not checked field by field here: ``handle`` refuses an unknown ``op``.
        answer = {"id": ident, "ok": True, "result": worker.handle(cast(WorkerRequest, request), on_phase)}
    except (Exception, SystemExit) as err:  # user code's sys.exit() ends a request with an error
        answer = {
            "id": ident,
            "ok": False,
            "error": f"{type(err).__name__}: {err}",
            "detail": traceback.format_exc()[-4000:],
        }
    damage = channel_damage(channels, fingerprint)
    if damage is not None:
        print(f"tilescope worker: {damage}", file=sys.stderr, flush=True)
        answer["fatal"] = damage
    answer["left"] = baseline.leftovers()
    frame = encode(ident, answer)
    try:
        write_all(up, frame)
    except OSError:
        return CHANNEL_DAMAGED_EXIT
    if damage is not None:
        return CHANNEL_DAMAGED_EXIT
    if not answer["left"]:
        secret = requests.readline().decode(errors="replace").strip()
        body = frame[frame.index(b"\n") + 1 : -1]
        try:
            write_all(up, encode(ident, {"confirm": digest(body)}, tag=secret or "?"))
        except OSError:
            return CHANNEL_DAMAGED_EXIT
    return 0


def main() -> None:
    for name, value in ONE_THREAD.items():
        os.environ[name] = value
    _dumpable(False)
    requests, replies = _channels()
    worker, hello = _start()
    write_all(replies, encode(None, hello))
    if worker is None:
        return
    zygote = Zygote(worker, requests, replies)
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # a secret the caller sent for an answer this worker did not confirm
        if not isinstance(request, dict):
            continue
        answer = zygote.serve(request)
        frame = encode(request.get("id"), answer)
        try:
            write_all(replies, frame)
        except OSError:
            os._exit(CHANNEL_DAMAGED_EXIT)
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

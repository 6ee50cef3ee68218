"""The messages between Tilescope and the processes that run user code, as typed JSON objects.

Two conversations, one line of JSON a message each way (framing, secrets and limits are the
transport's, in ``worker_link``/``frames`` and ``puzzles.children``):

- the compiler worker (``worker.py``), asked by ``service.Analyzer``: ``analyze``, ``pass_ir``,
  ``run``, ``profile`` and ``ping``; its answers carry the model's JSON (``FileAnalysis``, ``IRText``,
  ``RunReport``: ``SCHEMA.md``);
- the puzzle grader's children, asked by ``puzzles.judge``: the loader (``puzzles.builder``) builds a
  learner's file for each argument set; the kernel process (``puzzles.executor``) compiles, runs and
  times it.

They are ``TypedDict`` s, so the wire format stays plain JSON while the type checker holds both ends
of each conversation to the same fields. A reply from a child is still checked at run time (the
child runs user code): these types say what an honest one looks like.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# The compiler worker.

CONFIG_ARG = "config"
"""The pseudo-argument of an ``@autotune`` kernel that picks a config: an index, or ``all``. The host
puts it among a request's arguments (``compiler.variants``, ``compiler.cluster``); the worker reads it."""

PROFILE_LAUNCHES = 2
"""Launches of a kernel under ``ncu`` in ``worker.gpu_run``: the profile command reads this many."""


class _Lowering(TypedDict):
    """What a lowering depends on: the worker caches lowerings by these fields."""

    path: str
    source: str
    target: str
    kernel: str
    instantiations: list[dict[str, Any]]
    """``discovery.Instantiation`` s as JSON, computed by the parent: the worker never re-runs discovery."""
    args: dict[str, Any] | None


class AnalyzeRequest(_Lowering):
    op: Literal["analyze"]
    ptxas: bool
    hazards_s: float
    """Seconds of CPU interpretation per kernel for the hazard check (0: none; absent for pass IR)."""


class PassIRRequest(_Lowering):
    op: Literal["pass_ir"]
    index: int
    """``-1`` for the IR before the first pass."""


class RunRequest(TypedDict):
    op: Literal["run"]
    path: str
    source: str
    kernel: str | None
    args: dict[str, Any] | None
    inputs: str | None
    compare: str | None
    seed: int


class PingRequest(TypedDict):
    op: Literal["ping"]


class ProfileRequest(TypedDict):
    """``tilescope profile``'s timing, asked of the worker that sees the GPU (``gpu_run``)."""

    op: Literal["profile"]
    path: str
    source: str
    instantiation: dict[str, Any]
    args: dict[str, Any] | None
    warmup: int
    runs: int


WorkerRequest = AnalyzeRequest | PassIRRequest | RunRequest | PingRequest | ProfileRequest


# The puzzle grader's children.


class BuildPuzzleRequest(TypedDict):
    id: str
    op: Literal["build"]
    path: str
    source: str
    """The file's text, read by the grader: the sealed loader may not read where the file lies."""
    arg_sets: list[dict[str, int]]


class Built(TypedDict):
    id: str
    op: Literal["built"]
    index: int
    prim_func: str
    """The PrimFunc as TVM's JSON."""


class BuildError(TypedDict):
    id: str
    op: Literal["build-error"]
    index: int
    diagnostic: dict[str, Any]


class Done(TypedDict):
    id: str
    op: Literal["done"]


class Ready(TypedDict):
    op: Literal["ready"]


class ExecutorReady(Ready):
    cuda: bool
    gpu: str
    torch: str


class _Compile(TypedDict):
    op: Literal["compile"]
    key: str
    path: str
    device: str
    """``cuda``, or ``interpret`` for the CPU tile interpreter."""


class CompileRequest(_Compile, total=False):
    """A learner's PrimFunc (``prim_func``, from the loader) or a puzzle's own baseline (``args``)."""

    prim_func: str
    args: dict[str, int]
    source: str
    """With ``args``: the baseline's text, verified against the content manifest by the grader."""
    lineinfo: bool


class _RunCase(TypedDict):
    op: Literal["run"]
    key: str
    buffers: list[dict[str, Any]]
    device: str
    dirty: bool


class RunCaseRequest(_RunCase, total=False):
    outputs: list[str]
    """With ``device`` ``interpret``: the buffers the kernel may write."""


class _Time(TypedDict):
    op: Literal["time", "time-torch"]
    key: str
    warmup: int
    runs: int


class TimeRequest(_Time, total=False):
    expr: str
    """With ``time-torch``: the puzzle's torch baseline."""


ExecutorRequest = CompileRequest | RunCaseRequest | TimeRequest


class Compiled(TypedDict):
    op: Literal["compiled"]
    key: str
    params: list[dict[str, Any]]
    scopes: list[str]


class _CompileFailed(TypedDict):
    op: Literal["compile-error"]
    diagnostic: dict[str, Any] | None


class CompileFailed(_CompileFailed, total=False):
    message: str


class _Ran(TypedDict):
    op: Literal["ran"]


class Ran(_Ran, total=False):
    findings: list[dict[str, Any]]


class RunFailed(TypedDict):
    op: Literal["run-error"]
    message: str


class Timed(TypedDict):
    op: Literal["timed"]
    times_us: list[float]


ExecutorReply = Compiled | CompileFailed | Ran | RunFailed | Timed

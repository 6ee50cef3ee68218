"""The messages between the puzzle grader and its children, as typed JSON objects.

The judge asks (``puzzles.loading``, ``case_run``, ``perf_run``, ``gpu_route``); the loader
(``puzzles.builder``) builds a learner's file for each argument set; the kernel process
(``puzzles.executor``) compiles, runs and times it. One line of JSON a message each way; framing,
secrets and limits are ``puzzles.children``'s. They are ``TypedDict`` s, so the wire format stays
plain JSON while the type checker holds both ends to the same fields; a reply from a child is still
checked at run time (the child runs learner code): these types say what an honest one looks like.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


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

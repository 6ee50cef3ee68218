"""The messages between Tilescope and the processes that run user code, as typed JSON objects.

The compiler worker (``worker.main``), asked by ``compiler.service.Analyzer``: ``analyze``,
``pass_ir``, ``run``, ``profile`` and ``ping``, one line of JSON a message each way (framing,
secrets and limits are the transport's, in ``compiler.worker_link`` and ``sandbox.frames``); its
answers carry the model's JSON (``FileAnalysis``, ``IRText``, ``RunReport``: ``SCHEMA.md``). The
puzzle grader's children speak ``tilescope.puzzles.protocol``, in the same style.

They are ``TypedDict`` s, so the wire format stays plain JSON while the type checker holds both ends
of the conversation to the same fields. A reply from a child is still checked at run time (the
child runs user code): these types say what an honest one looks like.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# The compiler worker.

CONFIG_ARG = "config"
"""The pseudo-argument of an ``@autotune`` kernel that picks a config: an index, or ``all``. The host
puts it among a request's arguments (``compiler.variants``, ``compiler.cluster``); the worker reads it."""

COLD_VARIABLE = "TILESCOPE_WORKER_COLD"
"""Set to ``1`` in a worker's environment (and taken out of it before anything else runs): the zygote takes no
warm-up steps. For a worker that answers one check and is ended (the puzzle grader's sealed analyzer), whose
steps would cost more CPU (about 1.5 s) than they could ever save its one or two children (about 0.05 s each)."""

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


class _Streamed(TypedDict, total=False):
    stream: bool
    """Send the analysis so far before each hazard check (an editor publishes it), confirmed as an answer is."""


class AnalyzeRequest(_Lowering, _Streamed):
    op: Literal["analyze"]
    ptxas: bool
    hazards_s: float
    """Seconds of CPU interpretation per kernel for the hazard check (0: none; absent for pass IR)."""


class PassIRRequest(_Lowering):
    op: Literal["pass_ir"]
    indices: list[int]
    """The passes whose IR is printed (``-1``: before the first pass), all from one lowering: a diff needs two,
    an export or a viewer's counts every one, and each request lowers the kernel again."""


class RunRequest(TypedDict):
    op: Literal["run"]
    path: str
    source: str
    kernel: str | None
    args: dict[str, Any] | None
    inputs: str | None
    compare: str | None
    seed: int


class _Ping(TypedDict):
    op: Literal["ping"]


class PingRequest(_Ping, total=False):
    warm: bool
    """Answer once the zygote's warm-up steps are all taken (``Analyzer.warm``)."""


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

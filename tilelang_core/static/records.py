"""Records only the static tier produces: what the source says, with where it says it.

The shared model (``Buffer``, ``Diagnostic``, ``Span``, ``KernelRef``, ``Access``) is reused as is;
these records add the source positions an editor needs (a name's span, the call a hint hangs on)
and the facts that are only known before compiling (symbolic dims, where each argument came from).
All are frozen dataclasses that ``tilescope.core.model.to_json`` serialises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from tilescope.core.model import Access, Buffer, Diagnostic, Dim, KernelRef, Span

BindingOrigin = Literal[
    "directive", "recorded", "call", "autotune config 0", "default", "autotune", "const", "passed", "unknown"
]
"""``passed``: the call gives the parameter a value the source cannot evaluate (``topk=x.shape[1]``,
``**config``); not its default, and known only when the program runs."""
"""``autotune config 0``: the value of the first config of an ``@autotune`` (what the compiler tier
builds first when it fits); ``autotune``: a parameter an ``@autotune`` decorator chooses, unknown
where its configs are not known."""


@dataclass(frozen=True)
class Binding:
    """The value a kernel parameter takes for static evaluation, and where that value came from."""

    name: str
    value: int | float | str | tuple[int, ...] | None
    """``None`` when unknown: the parameter then stays symbolic (``M``). A tuple for a list of sizes
    (``batch_sizes_list=[64, 128, 256]``)."""
    origin: BindingOrigin
    line: int | None = None
    """Where the value was found: the directive, the call, or the default."""


@dataclass(frozen=True)
class BufferDecl:
    """A buffer as declared in source: the model record plus the positions editors point at."""

    buffer: Buffer
    name_span: Span
    """The declaring name (the ``A`` of ``A: T.Tensor(...)`` or ``A_shared = ...``)."""
    anchor: Span
    """The expression a hint follows: the ``T.alloc_*`` call or the ``T.Tensor`` annotation."""
    allocator: str
    """``alloc_shared``, ``alloc_fragment``, ``Tensor``, ``empty``..."""
    stages: int = 1
    """Copies a software pipeline keeps of it (shared buffers written inside ``T.Pipelined``)."""
    written: str | None = None
    """The shape as written (``(block_M, block_K)``), to show where the numbers come from."""


@dataclass(frozen=True)
class LaunchDecl:
    """``T.Kernel(...)`` as written, evaluated where possible."""

    grid: list[Dim]
    threads: Dim
    span: Span


@dataclass(frozen=True)
class RegionDecl:
    """An Ascend region: a vector region, ``with T.SimtVF(threads=...)`` or ``with T.SimdVF()``, or a
    section of a mixed kernel, ``with T.Cube()`` or ``with T.Vector()``."""

    kind: str
    """``SimtVF``, ``SimdVF``, ``Cube`` or ``Vector``."""
    threads: Dim | None
    """The SIMT region's thread count (``[x, y, z]`` multiplied); ``None`` for the others."""
    span: Span
    """The ``T.SimtVF(...)`` (or ``T.SimdVF()``, ``T.Cube()``, ``T.Vector()``) call."""


@dataclass(frozen=True)
class PipelineDecl:
    loop_var: str
    num_stages: Dim
    span: Span
    """The ``T.Pipelined(...)`` call."""
    literal: bool = False
    """``num_stages`` is written as a number in the call, so a hint would only repeat it."""


@dataclass(frozen=True)
class Occurrence:
    """One mention of a buffer name inside a kernel."""

    name: str
    span: Span
    role: Literal["definition", "read", "write", "use"]


@dataclass(frozen=True)
class PrimitiveUse:
    """A ``T.<name>`` attribute in the file; ``span`` covers ``<name>`` only."""

    name: str
    span: Span
    call: bool


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` (core coordinates: 1-based lines, UTF-8 columns) with ``new_text``."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class QuickFix:
    """The edit that resolves one diagnostic, ready for an editor's code action."""

    diagnostic: Diagnostic
    title: str
    edits: list[TextEdit]


@dataclass(frozen=True)
class SharedFloor:
    """A certain lower bound on a kernel's shared memory: buffers live together from ``line``."""

    bytes: int
    line: int
    parts: list[tuple[str, int, int]]
    """Each buffer: name, bytes of one copy, copies kept."""


@dataclass(frozen=True)
class StaticKernel:
    ref: KernelRef
    span: Span
    """The whole kernel definition (factory included)."""
    bindings: list[Binding]
    buffers: list[BufferDecl]
    launch: LaunchDecl | None
    pipelines: list[PipelineDecl]
    accesses: Sequence[Access]
    """Moved when read, like ``occurrences``: hover and the older releases' span matching read them."""
    occurrences: Sequence[Occurrence]
    """Kept in the block's own lines and moved when read (``shift.Placed``): only navigation reads them."""
    shared_bytes: int | None
    """Shared memory per block (pipeline copies included), ``None`` when a size is symbolic."""
    target: str
    name_span: Span | None = None
    """The kernel's name on its ``def`` line."""
    launches: list[LaunchDecl] = field(default_factory=list)
    """Every ``T.Kernel`` of the prim_func, in order; ``launch`` is the first."""
    shared_floor: SharedFloor | None = None
    """Shared memory the kernel needs at least, whatever TileLang merges (``checks.shared_floor``)."""
    shared_planned: int | None = None
    """Shared memory per block as TileLang lays it out (``shared_plan``); ``None`` where the text
    cannot say exactly (a symbolic size or stage count, stages assigned by hand)."""
    regions: list[RegionDecl] = field(default_factory=list[RegionDecl])
    """The Ascend vector regions of the kernel, in order."""

    def buffer(self, name: str) -> BufferDecl | None:
        return next((b for b in self.buffers if b.buffer.name == name), None)


@dataclass(frozen=True)
class StaticFile:
    """Everything the static tier knows about one file's text."""

    path: str
    target: str
    kernels: list[StaticKernel]
    diagnostics: list[Diagnostic]
    primitives: Sequence[PrimitiveUse] = field(default_factory=list)
    """Every ``T.*`` use, moved to file lines when first read (``shift.Placed``)."""
    fixes: list[QuickFix] = field(default_factory=list)
    """Quick fixes for the diagnostics that name one."""
    aliases: list[str] = field(default_factory=list)
    """Names the file binds to ``tilelang.language`` (``T`` almost always)."""
    dialect: str | None = None
    """The backend dialect the file's kernels are written in (``ascend`` for ``tilelang.ascend.language``)."""

    def kernel_at(self, line: int) -> StaticKernel | None:
        """The kernel whose definition contains ``line`` (1-based)."""
        for kernel in self.kernels:
            if kernel.span.line <= line <= (kernel.span.end_line or kernel.span.line):
                return kernel
        return None

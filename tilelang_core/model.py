"""The kernel model: plain, typed, JSON-serialisable records that every consumer reads.

Nothing here imports TileLang or TVM, so the language server, the viewers and the puzzles can
load, cache and ship the model without paying for the compiler. Bump ``SCHEMA_VERSION`` whenever
a field changes meaning or disappears; adding an optional field keeps the version.

It is one module over 400 lines on purpose: every record of the versioned schema stands beside
the others, so ``SCHEMA.md`` and its test map onto one file.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from tilescope.core.display import dims_text

SCHEMA_VERSION = 2

Severity = Literal["error", "warning", "information", "hint"]
Dim = int | str
"""A shape extent: an int when known, else the symbolic expression as written (``"M"``)."""


@dataclass(frozen=True)
class Span:
    """A source range. Lines are 1-based, columns 0-based, as Python's ``ast`` reports them."""

    line: int
    column: int = 0
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class Related:
    """Another place a diagnostic is about (the other access of a race), as LSP's ``relatedInformation``."""

    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    span: Span
    code: str
    """Stable identifier, e.g. ``build-error``, ``layout-inference``, ``ptxas-spill``, ``timeout``."""
    source: str = "tilescope"
    kernel: str | None = None
    detail: str | None = None
    """The raw compiler text (traceback tail, ptxas output) behind the plain-words message."""
    related: list[Related] = field(default_factory=list[Related])
    """The other lines it names: the second access of a race, the write a read overlaps."""
    witness: str | None = None
    """How the interpreter reproduced it: blocks, threads, indices (hover shows it)."""


@dataclass(frozen=True)
class Param:
    """A parameter of a kernel factory (``M``, ``block_M=128``)."""

    name: str
    default: str | None = None
    """The default value's source text, or ``None`` when the parameter has no default."""


@dataclass(frozen=True)
class KernelRef:
    """A kernel found in a file by discovery, before anything runs."""

    name: str
    style: Literal["factory", "jit-factory", "jit-eager", "prim_func"]
    span: Span
    params: list[Param] = field(default_factory=list[Param])


@dataclass(frozen=True)
class Buffer:
    name: str
    shape: list[Dim]
    dtype: str
    scope: str
    """``global``, ``shared``, ``shared.dyn``, ``local.fragment``, ``local``, ``local.var``..."""
    bytes: int | None
    line: int | None
    """The Python line that declared the buffer, from TileLang's IR spans."""
    is_param: bool = False


@dataclass(frozen=True)
class Layout:
    """A layout the compiler inferred for one buffer, read right after ``tl.LayoutInference``.

    The expressions are TVM's own printed forms over ``input_vars`` (and ``replicate_var`` for
    fragments); ``tilescope.core.layout_eval`` evaluates them over the whole tile.
    """

    buffer: str
    kind: Literal["fragment", "layout"]
    input_shape: list[int]
    output_shape: list[int]
    input_vars: list[str]
    index: list[str]
    """The forward index expressions, one per output dimension."""
    thread: str | None = None
    """Fragments: the forward thread expression."""
    replicate_var: str | None = None
    replicate: int | None = None
    thread_extent: int | None = None
    thread_begin: int | None = None
    """Fragments: the first thread of the range (consumer warps after warp specialisation start past 0)."""
    elements_per_thread: int | None = None
    swizzle: str | None = None
    """Shared layouts: ``none``, ``128B swizzle``, ``64B swizzle``, ``32B swizzle``, ``padded`` or ``custom``."""
    text: str = ""
    """TileLang's own one-line rendering of the layout."""


@dataclass(frozen=True)
class ThreadRange:
    """Threads ``begin`` to ``end - 1`` of a warp-specialised block, and what they do."""

    role: Literal["producer", "consumer"]
    begin: int
    end: int


@dataclass(frozen=True)
class Launch:
    """One ``T.Kernel``: a prim_func with two of them launches two device kernels."""

    grid: list[int]
    threads: int
    """Threads per block as TileLang builds it: ``threads=`` of ``T.Kernel``, else the backend's default (128)."""
    threads_after_ws: int
    """Threads per block after warp specialisation added producer warps."""
    span: Span | None = None
    threads_given: bool = True
    """Whether ``T.Kernel`` says ``threads=``; when not, ``threads`` is the backend's default."""
    thread_ranges: list[ThreadRange] = field(default_factory=list[ThreadRange])
    """After warp specialisation: the producer and consumer thread ranges (empty when not specialised)."""
    grid_exprs: list[str] = field(default_factory=list[str])
    """Where an extent of ``grid`` is not a number (``-1``: it depends on an argument left symbolic), every
    extent as the final device kernel is launched with it (``(M + 31) // 32``); empty when all are numbers."""

    def grid_dims(self) -> list[Dim]:
        """The grid to show: numbers, and the launch's expression where an extent is symbolic."""
        if not self.grid_exprs:
            return list(self.grid)
        return [n if n >= 0 else self.grid_exprs[i] for i, n in enumerate(self.grid)]


@dataclass(frozen=True)
class Pipeline:
    loop_var: str
    num_stages: int
    line: int | None


@dataclass(frozen=True)
class PassRecord:
    index: int
    name: str
    phase: str
    duration_ms: float
    changed: bool


@dataclass(frozen=True)
class Resources:
    """What ptxas reports for the device code."""

    registers: int
    spill_store_bytes: int
    spill_load_bytes: int
    shared_bytes: int
    arch: str
    raw: str = ""


@dataclass(frozen=True)
class Access:
    """One tile operation touching buffers: who reads and who writes what, at which line."""

    op: str
    """``copy``, ``gemm``, ``reduce_max``, ``fill``, ``parallel``..."""
    line: int | None
    reads: list[str]
    writes: list[str]
    pipelined: bool = False


SharedOp = Literal["load", "store"]
SharedInstruction = Literal["lds", "sts", "ldmatrix", "stmatrix", "cp.async"]


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory instruction of the lowered kernel and its bank conflicts, per warp request.

    ``ways`` is the worst phase's conflict degree (1: conflict-free); ``wavefronts`` the mean
    wavefronts a request takes, against ``ideal_wavefronts`` without conflicts.
    """

    buffer: str
    line: int | None
    """The tile operation that made it (a ``T.copy``, ``T.gemm``...), else the IR's own span."""
    op: SharedOp
    ways: int
    wavefronts: float
    ideal_wavefronts: float = 1.0
    instruction: SharedInstruction = "lds"
    tile_op: str | None = None
    requests_per_block: int = 0
    """Warp requests one block issues (loop trip counts times active warps)."""
    lane_banks: list[int] = field(default_factory=list[int])
    """The bank each lane of the first request starts at (-1: the lane takes no part)."""


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM by CUDA's occupancy rules, what limits them, and what a change of each would give."""

    arch: str
    threads: int
    registers: int | None
    """Per thread, from ptxas; ``None`` when not compiled: then registers are unknown, not unlimited."""
    shared_bytes: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float
    """Active warps over the SM's maximum."""
    limits: dict[str, int]
    """Blocks per SM each resource alone allows: ``blocks``, ``threads``, ``registers``, ``shared``."""
    limited_by: list[str]
    what_if: list[str] = field(default_factory=list[str])
    upper_bound: bool = False
    """Registers are unknown: ``blocks_per_sm``, ``warps_per_sm`` and ``occupancy`` are the most the known
    resources allow (a kernel of many registers gets fewer: TileLang's warp-specialised GEMM is bound to
    4 blocks by shared memory and held to 1 by its 240 registers), and nothing is named as the limit."""


Bottleneck = Literal["memory", "compute"]


@dataclass(frozen=True)
class RooflineBound:
    """The best time one GPU's datasheet peaks allow."""

    gpu: str
    bound: Bottleneck
    best_us: float
    memory_us: float
    compute_us: float


@dataclass(frozen=True)
class Roofline:
    """FLOPs and bytes of one launch at the kernel's sizes, and the bound on each GPU."""

    flops: int
    tensor_flops: int
    """Of ``flops``, those of ``T.gemm`` (tensor cores)."""
    global_bytes: int
    """Bytes the kernel's loads and stores of global memory request (tiles read again count again)."""
    compulsory_bytes: int
    """Each parameter tensor the kernel touches, read or written once: what DRAM must move at least."""
    shared_bytes: int
    """Bytes moved through shared memory by loads and stores."""
    arithmetic_intensity: float
    """``flops / compulsory_bytes``."""
    bounds: list[RooflineBound]


FitStatus = Literal["fits", "spills", "exceeds-shared-memory", "exceeds-threads", "fails", "not-lowered"]


@dataclass(frozen=True)
class TuneConfig:
    """One entry of an ``@autotune`` search space and, when it was lowered, whether it can run."""

    index: int
    values: dict[str, Any]
    """The config as the autotuner would pass it (non-literal values as text)."""
    status: FitStatus
    reason: str | None = None
    """Why it cannot run (or spills), in plain words."""
    line: int | None = None
    """The user's line the reason points at."""
    shared_bytes: int | None = None
    threads: int | None = None
    """Threads per block after warp specialisation."""


@dataclass(frozen=True)
class Autotune:
    """An ``@autotune`` kernel's search space; Tilescope never runs the autotuner, it lowers configs."""

    line: int
    """The ``@autotune`` decorator."""
    configs: list[TuneConfig]
    chosen: int | None
    """The config this model was built with; ``None`` when the call site's own values were used."""
    chosen_by: Literal["first-fit", "directive", "call"]
    summary: str
    """One line for a code lens: ``24 configs: 18 fit, 6 exceed shared memory``."""


AscendCore = Literal["cube", "vector", "scalar"]
"""Where an Ascend statement runs: the Cube core (AIC), the Vector cores (AIV), or both cores' scalar units."""
FlagKind = Literal["set", "wait", "cross-set", "cross-wait"]


@dataclass(frozen=True)
class AscendBuffer:
    """A buffer of an Ascend kernel at its memory level."""

    name: str
    level: str
    """``GM``, ``L1``, ``L0A``, ``L0B``, ``L0C`` or ``UB`` (the Unified Buffer of ``T.alloc_shared``)."""
    shape: list[Dim]
    dtype: str
    bytes: int | None
    """One slot's bytes."""
    slots: int
    """Multi-buffer slots the compiler gave it (``tl.buffer_versions_map``); 1 when single."""
    line: int | None
    is_param: bool = False
    storage: str | None = None
    """The allocation it was placed in by the final kernel (``buf_dyn_l1``, the merged UB ``buf_dyn_shmem``)."""
    storage_bytes: int | None = None
    offset: int | None = None
    """Its byte offset in ``storage``, as ``tl.MergeUBAllocations`` placed it (``None`` when not merged)."""


@dataclass(frozen=True)
class MemoryLevel:
    """One on-chip level's plan: bytes of its buffers times their slots, against the part's capacity."""

    level: str
    capacity: int
    used: int
    buffers: list[str]
    fits: bool


@dataclass(frozen=True)
class AscendFlag:
    """A synchronisation flag the compiler inserted.

    ``set``/``wait`` are pipe flags (``asc_sync_notify``/``asc_sync_wait``) from ``source_pipe`` to
    ``target_pipe`` on one core; ``cross-set``/``cross-wait`` are cross-core flags (``mode``) raised
    after ``source_pipe``, ``event`` their flag id."""

    kind: FlagKind
    core: AscendCore
    source_pipe: str
    target_pipe: str
    event: str
    """The event (or flag) id: a number, or the expression that rotates it over multi-buffer slots."""
    mode: int | None = None
    """Cross-core flags: 4 between the Cube core and its Vector cores (``asc_sync_intra_*``), 0 between all
    AI cores of the launch (``asc_sync_inter_*``, a split-K reduction's barrier)."""


@dataclass(frozen=True)
class ScheduleStep:
    """One statement of the scheduled kernel (after ``tl.InsertSync``), in program order, with its core."""

    index: int
    core: AscendCore
    """``cube`` (AIC), ``vector`` (AIV) or ``scalar`` (control both cores run)."""
    op: str
    """``copy``, ``gemm``, ``set``, ``wait``, ``cross-set``, ``cross-wait``, ``store``, ``scalar``..."""
    operands: list[str]
    line: int | None
    """The user's line; a flag's is ``None`` (the compiler wrote it): it sits between the steps around it."""
    depth: int
    loop: str | None
    latency: int | None = None
    """The scheduler's latency estimate (cycles), where it made one."""
    loop_index: int | None = None
    """The innermost loop it runs in: an index into ``AscendModel.loops``."""
    flag: AscendFlag | None = None


@dataclass(frozen=True)
class AscendLoop:
    loop_var: str
    extent: int | None
    num_stages: int | None
    multi_buffered: list[str]
    """Buffers the compiler may give several slots in this loop (``multi_buffer_eligible``)."""
    line: int | None
    depth: int


@dataclass(frozen=True)
class CoreSection:
    """What one core's section of the final kernel (``ASC_IS_AIC``/``ASC_IS_AIV``) names and how many flags it holds."""

    buffers: list[str]
    flags: int


@dataclass(frozen=True)
class AscendModel:
    """What TileLang's Ascend pipeline decided for one kernel."""

    kernel_kind: str
    """``mix`` (Cube and Vector), ``cube`` or ``vector``: the AscendC's ``__mix__``/``__cube__``/``__vector__``."""
    buffers: list[AscendBuffer]
    memory: list[MemoryLevel]
    schedule: list[ScheduleStep]
    loops: list[AscendLoop]
    flags: list[AscendFlag]
    """Every flag of the final kernel, the ones the AscendC source holds."""
    sections: dict[str, CoreSection]
    """``aic`` and ``aiv`` (one of them for a one-core kernel)."""
    simt_threads: list[int]
    """Thread counts of its SimtVF regions."""
    scheduled: bool
    """Whether the schedule comes from ``tl.InsertSync`` (false when lowering stopped before it)."""


@dataclass(frozen=True)
class KernelModel:
    kernel: str
    args: dict[str, Any]
    target: str
    buffers: list[Buffer]
    launch: Launch | None
    layouts: list[Layout]
    pipelines: list[Pipeline]
    warp_specialized: bool
    shared_bytes: int
    passes: list[PassRecord]
    accesses: list[Access] = field(default_factory=list[Access])
    device_source: str | None = None
    resources: Resources | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list[Diagnostic])
    lower_ms: float = 0.0
    launches: list[Launch] = field(default_factory=list[Launch])
    """Every ``T.Kernel`` in program order; ``launch`` is the first."""
    arg_sources: dict[str, str] = field(default_factory=dict[str, str])
    """Where each argument came from: ``directive``, ``recorded``, ``call``, ``default``, or a dry run's words
    (``from_dry_run``)."""
    pass_configs: dict[str, Any] = field(default_factory=dict[str, Any])
    """The pass configuration it was lowered with (the PrimFunc's, then ``@tilelang.jit``'s)."""
    out_idx: list[int] | None = None
    """``out_idx`` of ``@tilelang.jit``: which parameters the compiled kernel allocates and returns."""
    autotune: Autotune | None = None
    hazard_check: HazardCheck | None = None
    """The interpreted blocks behind its ``data-race``, ``missing-barrier``, ``out-of-bounds`` and
    ``uninitialised-read`` diagnostics; ``None`` when the check did not run."""
    shared_accesses: list[SharedAccess] = field(default_factory=list[SharedAccess])
    occupancy: Occupancy | None = None
    roofline: Roofline | None = None
    ascend: AscendModel | None = None
    """Ascend 950 kernels: levels, memory plan, schedule, flags and core split; ``None`` for other targets."""

    def buffer(self, name: str) -> Buffer | None:
        return next((b for b in self.buffers if b.name == name), None)

    def layout(self, name: str) -> Layout | None:
        return next((layout for layout in self.layouts if layout.buffer == name), None)

    @classmethod
    def unanalysed(cls, kernel: str, args: dict[str, Any], target: str, diagnostics: list[Diagnostic]) -> KernelModel:
        """A kernel that was not built or lowered: it still appears, with why in its diagnostics."""
        return cls(kernel, args, target, [], None, [], [], False, 0, [], diagnostics=diagnostics)


@dataclass(frozen=True)
class IRText:
    """A pass's IR as TVMScript, with the Python line behind each IR line where TileLang kept it."""

    text: str
    source_lines: list[int | None] = field(default_factory=list[int | None])


@dataclass(frozen=True)
class FileAnalysis:
    """Everything the compiler tier knows about one file: the answer to ``tilescope check --json``."""

    path: str
    target: str
    kernels: list[KernelModel]
    discovered: list[KernelRef]
    diagnostics: list[Diagnostic]
    schema_version: int = SCHEMA_VERSION

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.all_diagnostics())

    def all_diagnostics(self) -> list[Diagnostic]:
        return [*self.diagnostics, *(d for k in self.kernels for d in k.diagnostics)]

    def kernel(self, name: str | None = None) -> KernelModel | None:
        if name is None:
            return self.kernels[0] if self.kernels else None
        return next((k for k in self.kernels if k.kernel == name), None)


# Records of ``tilescope run``: one interpreted launch of a kernel on the CPU.

FindingKind = Literal["out-of-bounds-read", "out-of-bounds-write", "uninitialised-read", "input-write"]
HazardKind = Literal["data-race", "missing-barrier"]


@dataclass(frozen=True)
class Finding:
    """Every access of one kind, to one buffer, from one source line; the first is kept exactly."""

    kind: FindingKind
    buffer: str
    index: list[int]
    """The first offending element, one index per dimension."""
    shape: list[int]
    line: int
    """The kernel-file line of the statement or tile operation that made the access (0: unknown)."""
    count: int
    """How many element accesses of this kind the line made."""
    block: list[int] | None = None
    """The block (``blockIdx`` x, y, z as launched) of the first offending access."""
    where: str | None = None
    """The first offending access's loop iteration or thread, in words (``i=63`` or ``thread 5``)."""

    def describe(self) -> str:
        """``line 20: out-of-bounds read of window[1024] (shape 1024), 7 elements``."""
        what = {
            "out-of-bounds-read": "out-of-bounds read of",
            "out-of-bounds-write": "out-of-bounds write to",
            "uninitialised-read": "read of never-written",
            "input-write": "write to input",
        }[self.kind]
        index = ", ".join(str(i) for i in self.index)
        shape = dims_text(self.shape)
        where = f"line {self.line}: " if self.line else ""
        many = f", {self.count} elements" if self.count > 1 else ""
        block = f" in block {tuple(self.block)}" if self.block is not None else ""
        lane = f" at {self.where}" if self.where else ""
        return f"{where}{what} {self.buffer}[{index}] (shape {shape}){many}{block}{lane}"


@dataclass(frozen=True)
class HazardAccess:
    """One side of a hazard: which line, reading or writing, by whom."""

    line: int
    write: bool
    block: list[int]
    who: str
    """The thread or loop iteration in words: ``thread 3 (i=0, j=6)``."""


@dataclass(frozen=True)
class Hazard:
    """Two accesses to one element that nothing orders, found by the interpreter with a witness.

    ``data-race``: two threads (or two blocks) write the element, or one writes it while another
    block reads it. ``missing-barrier``: inside one statement a thread overwrites an element another
    thread reads, where no barrier can separate them.
    """

    kind: HazardKind
    buffer: str
    scope: str
    index: list[int]
    first: HazardAccess
    second: HazardAccess
    count: int
    """How many conflicting element pairs of this kind the two lines made (at least)."""
    confirmed: bool = True
    """Whether the two sides are known to be different threads (else their loop iterations only)."""

    def describe(self) -> str:
        index = ", ".join(str(i) for i in self.index)

        def side(a: HazardAccess) -> str:
            verb = "writes" if a.write else "reads"
            return f"{a.who} of block {tuple(a.block)} {verb} it at line {a.line}"

        return f"{self.kind} on {self.scope} {self.buffer}[{index}]: {side(self.first)}, {side(self.second)}"


@dataclass(frozen=True)
class HazardCheck:
    """What the interpreter ran to look for hazards: which blocks, how long, and why it stopped early."""

    grid: list[int]
    blocks: list[list[int]]
    """The blocks that ran, in order (first, second, the last and the tail along each axis)."""
    seconds: float
    stopped: str | None = None
    """Why fewer blocks ran than planned, or why nothing ran (not interpretable: uses X at line N)."""


@dataclass(frozen=True)
class OutputStats:
    """Summary of one buffer after the run."""

    name: str
    shape: list[int]
    dtype: str
    finite: int
    nan: int
    inf: int
    minimum: float | None
    maximum: float | None
    mean: float | None
    unwritten: int
    """Elements the kernel never wrote (outputs only)."""


@dataclass(frozen=True)
class Comparison:
    """The outputs against a reference: the worst element and how many fall outside tolerance."""

    name: str
    wrong: int
    total: int
    max_abs_error: float
    first_wrong: list[int] | None
    atol: float
    rtol: float


@dataclass(frozen=True)
class RunReport:
    """One interpreted launch of a kernel (``tilescope run``)."""

    kernel: str
    args: dict[str, int | float | str | bool]
    grid: list[int]
    threads: list[int]
    seconds: float
    outputs: list[OutputStats] = field(default_factory=list[OutputStats])
    findings: list[Finding] = field(default_factory=list[Finding])
    comparisons: list[Comparison] = field(default_factory=list[Comparison])
    error: str | None = None
    """Why the kernel could not be interpreted or stopped (with its line), else ``None``."""
    line: int | None = None
    schema_version: int = SCHEMA_VERSION
    hazards: list[Hazard] = field(default_factory=list[Hazard])
    reference: str | None = None
    """Where the expected outputs came from: ``--compare``'s function or the file's ``ref_program``."""
    culprits: list[str] = field(default_factory=list[str])
    """Per wrong output, the first wrong element and the block and thread that last wrote it."""
    config: str | None = None
    """For an ``@autotune`` kernel, which config ran and why (the one ``check`` analyses, or ``--config N``)."""


@dataclass(frozen=True)
class Timing:
    """One kernel timed on a GPU: CUDA events, L2 flushed before each run, after warm-up."""

    gpu: str
    arch: str
    time_us: float
    """The median."""
    times_us: list[float]
    warmup: int
    error: str | None = None


@dataclass(frozen=True)
class NcuFigures:
    """What Nsight Compute measured on one warm run (``None``: the metric was not reported).

    A kernel with several ``T.Kernel`` launches as many device kernels a run: counters are their sum,
    launch and occupancy figures the first's (``compiler.ncu.one_run``)."""

    metrics: dict[str, float]
    """Raw metric values by ncu name."""
    load_conflicts_per_request: float | None
    store_conflicts_per_request: float | None
    achieved_occupancy: float | None
    """Active warps over the SM's maximum, averaged over the launch (0..1)."""
    blocks_per_sm: int | None
    """The occupancy limit ncu's launch statistics report (the smallest of its per-resource limits)."""
    error: str | None = None


@dataclass(frozen=True)
class ProfileReport:
    """The answer to ``tilescope profile``: static figures, and on a GPU the measured ones beside them."""

    path: str
    kernel: str
    args: dict[str, Any]
    target: str
    gpu: str | None
    """The GPU timed on; ``None`` when the machine has none."""
    message: str
    timing: Timing | None
    roofline_share: float | None
    """The roofline's best time on this GPU over the measured time (1.0 is the bound)."""
    static: KernelModel | None
    ncu: NcuFigures | None = None
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True)
class VariantFit:
    """Which variant (kernel, target, autotune config) and whether it can run: what each view of one starts with."""

    kernel: str
    target: str
    config_index: int | None
    """The autotune config (``None``: not autotuned, or built with the call site's own values)."""
    config: dict[str, Any] | None
    status: FitStatus
    reason: str | None


@dataclass(frozen=True)
class Variant(VariantFit):
    """One kernel lowered for one target and one autotune config: a row of ``tilescope variants``."""

    line: int | None
    kernels: list[KernelModel]
    """As ``check --json`` for this target and config: the one kernel, or none when it did not build."""
    diagnostics: list[Diagnostic]
    """File-level diagnostics, as in ``check --json``."""


@dataclass(frozen=True)
class VariantsReport:
    """The answer to ``tilescope variants --json``."""

    path: str
    variants: list[Variant]
    schema_version: int = SCHEMA_VERSION


@dataclass(frozen=True)
class Change:
    """One fact that differs between two variants."""

    what: str
    """``grid``, ``threads``, ``shared_bytes``, ``registers``, ``layout C_local``, ``pass tl.Foo``..."""
    a: str | None
    b: str | None


@dataclass(frozen=True)
class VariantDiff:
    """What changed from variant ``a`` to variant ``b``: resources, layouts and the pass list."""

    a: str
    b: str
    resources: list[Change]
    layouts: list[Change]
    passes: list[Change]
    """Passes that run in only one of the two (``a`` or ``b`` is ``None`` on the side without it)."""


DRY_RUN = "dry run"
"""How an argument source a dry run taught begins (``dry run of main(), line 212, fake H100``)."""


def from_dry_run(source: str | None) -> bool:
    """Whether an argument's source (``KernelModel.arg_sources``, ``Instantiation.sources``) is a dry run's."""
    return source is not None and source.startswith(DRY_RUN)


T_ = TypeVar("T_")


def to_json(obj: Any) -> Any:
    """The JSON-ready form of any model record (dataclasses become dicts)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        mapping = typing.cast("dict[Any, Any]", obj)
        return {str(k): to_json(v) for k, v in mapping.items()}
    if isinstance(obj, Sequence) and not isinstance(obj, str | bytes):
        return [to_json(x) for x in typing.cast("Sequence[Any]", obj)]
    return obj


TIMINGS = frozenset({"duration_ms", "lower_ms", "seconds"})
"""The fields measured anew by every run: two analyses of the same kernel agree on all but these."""


def untimed(data: Any) -> Any:
    """A record's JSON form (``to_json``) without its wall-clock timings, to compare two runs."""
    if isinstance(data, dict):
        items = typing.cast(dict[str, Any], data).items()
        return {k: untimed(v) for k, v in items if k not in TIMINGS}
    if isinstance(data, list):
        return [untimed(v) for v in typing.cast(list[Any], data)]
    return data


def dumps(obj: Any, indent: int | None = None) -> str:
    return json.dumps(to_json(obj), indent=indent)


def from_json(cls: type[T_], data: Any) -> T_:
    """Rebuild a model record of type ``cls`` from its JSON form."""
    return typing.cast(T_, _decode(cls, data))


@functools.cache
def _fields(tp: Any) -> tuple[dict[str, Any], frozenset[str]]:
    """A record's resolved field types and its constructor's names: ``get_type_hints`` evaluates every
    annotation's text again on each call, which made decoding a model cost more than reading it."""
    return get_type_hints(tp), frozenset(f.name for f in dataclasses.fields(tp) if f.init)


def _decode(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(tp) if a is not type(None)]
        for option in options:
            if dataclasses.is_dataclass(option) and isinstance(data, dict):
                return _decode(option, data)
        return data
    if origin is list:
        (item,) = get_args(tp)
        return [_decode(item, x) for x in data]
    if origin is dict:
        _, value = get_args(tp)
        return {k: _decode(value, v) for k, v in data.items()}
    if dataclasses.is_dataclass(tp):
        hints, names = _fields(tp)
        record: Any = tp  # a dataclass type, which the check above narrows to its instance protocol
        return record(**{k: _decode(hints[k], v) for k, v in data.items() if k in names})
    return data

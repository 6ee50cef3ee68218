"""Every diagnostic code Tilescope emits, in one table: its severity, the tier that finds it, what it
says (in plain words and as the message a site fills in), how to fix it, and a minimal example.

A site never writes a diagnostic's words: it calls ``diagnostic(code, span, field=value, ...)`` and the
message is the code's template (or one of its named ``forms``) filled with the fields, so the words
users read, ``tilescope explain`` and the SARIF rules cannot drift apart. ``SCHEMA.md``'s code list,
the SARIF rules of ``tilescope check --format sarif`` and ``tilescope explain`` are written from this
table, and ``tests/core/test_codes.py`` checks that every code the source emits is here, every code
here is emitted (and expected by a test), no site passes words of its own, and every site gives
exactly the fields its template names. A new diagnostic is one entry in ``CODES``.

It is one module over 400 lines on purpose: ``CODES`` is one table, most of the file, and the few
functions that read it (``diagnostic``, ``explain``, the SARIF rules, the ``SCHEMA.md`` list) stand
beside it, so a code's words and every place they are shown are read in one file.
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from tilescope.core.model import Diagnostic, Related, Severity, Span

Tier = Literal["input", "static", "compiler", "hazards", "worker", "editor", "puzzles"]
TIERS: dict[Tier, str] = {
    "input": "reading the file and the request, before anything runs",
    "static": "the static tier, which reads the source without running it",
    "compiler": "the compiler tier, which builds and lowers the kernel in the supervised worker",
    "hazards": "the hazard check, which interprets a few blocks of each lowered kernel on the CPU in the worker",
    "worker": "the supervisor of the worker, when the worker or the code it runs misbehaves",
    "editor": "the language server",
    "puzzles": "the puzzle grader and its CPU interpreter",
}

CodeName = Literal[
    "syntax-error", "io-error", "bad-target", "no-kernels", "no-kernel", "unknown-primitive", "wrong-arguments",
    "missing-values", "not-evaluated", "not-analysed", "copy-shape", "gemm-shape", "gemm-dtype", "gemm-accum-dtype",
    "gemm-uninitialised", "reduce-shape", "shared-memory", "load-error", "missing-module", "needs-gpu",
    "not-a-kernel", "missing-args", "record-incomplete", "device-profile", "build-error", "compile-error",
    "layout-inference", "shared-memory-overflow", "ascend-dialect", "ascend-rejected", "ascend-memory-overflow",
    "autotune-config", "tilelang-warning", "ptxas-error", "ptxas-spill",
    "ptxas-timeout", "bank-conflict", "internal-error", "data-race", "missing-barrier", "out-of-bounds",
    "uninitialised-read", "timeout", "worker-crash", "worker-channel", "worker-leftovers", "supervisor-lost",
    "supervised", "stopped", "tilelang-version", "tilelang-import", "worker-start", "not-interpretable",
    "out-of-memory",
    "dialect-primitive", "ascend-launch", "ascend-vector-region",
]  # fmt: skip
"""Every code, so a site that names one pyright does not know is a type error (the test checks it lists ``CODES``)."""

RESERVED = frozenset({"code", "span", "form", "severity", "kernel", "detail", "related", "witness", "fields"})
"""``diagnostic``'s own parameters: a template names ``kernel`` to show the diagnostic's kernel, and no other."""


@dataclass(frozen=True)
class Code:
    code: str
    severity: Severity
    """The usual severity; a site passes another only for a documented reason (``needs-gpu``'s notes)."""
    tier: Tier
    summary: str
    """What the code means in one plain sentence, with no placeholders (SARIF's ``shortDescription``)."""
    message: str
    """The message, with ``{placeholders}`` for the fields a site gives (``str.format`` syntax)."""
    fix: str
    example: str
    """A minimal case that gives the code: source lines, or the situation where no source does."""
    forms: Mapping[str, str] = field(default_factory=dict[str, str])
    """Other messages of the code, by name, for cases that say more or differently (``diagnostic(form=...)``)."""

    def template(self, form: str | None = None) -> str:
        """The message named ``form`` (the code's own ``message`` when ``None``)."""
        if form is None:
            return self.message
        if form not in self.forms:
            raise KeyError(f"{self.code} has no form {form!r} (it has {', '.join(self.forms) or 'none'})")
        return self.forms[form]

    def templates(self) -> dict[str | None, str]:
        """Every message of the code, by form (``None`` for the main one)."""
        return {None: self.message, **self.forms}


def _c(
    code: CodeName,
    severity: Severity,
    tier: Tier,
    summary: str,
    message: str,
    fix: str,
    example: str,
    forms: Mapping[str, str] | None = None,
) -> Code:
    return Code(code, severity, tier, summary, message, fix, example, dict(forms or {}))


_GPU = (
    ", and analysis runs without one. Give the values it needs in a '# tilescope: NAME=VALUE' directive above the "
    "def, or record a real run with 'tilescope record -- python FILE' on a GPU machine"
)
_EXITED = ", so it could not be analysed"
_OOB = "{buffer}[{index}], outside its shape {shape}"
_READ_NOWHERE = "Reads {buffer}[{index}], which nothing wrote first"
_CONFLICT = "{ways}-way shared-memory bank conflict: {what} of '{buffer}'"
_COST = " take {wavefronts:g} wavefronts per warp request instead of {ideal:g}; "
_PAD = "allocate it as ({padded}) to make them conflict-free"
_SWIZZLE = "a swizzled layout (T.annotate_layout with tilelang.layout.make_swizzled_layout) may remove them"
_MISSING_ARGS = (
    "Kernel '{kernel}' needs values for {names}: add '# tilescope: {directive}' above the def, or call it in this file"
)
_SUSPECTS = (
    "TileLang's race check suspects that several iterations of the loop over {loop_vars} store different values "
    "to `{access}`; "
)
_RELEASE = " (TileLang {version})"
_K = "T.gemm K mismatch: {a} gives K = {k_a}, {b} gives K = {k_b}"
_WORKER_START = "The compiler worker could not start in {python} ({error})"

# One entry a code, in the order SCHEMA.md lists them: code, severity, tier, summary, message, fix,
# example, and the other forms of the message.
# fmt: off
CODES: dict[str, Code] = {c.code: c for c in (
    _c("syntax-error", "error", "input", "Python cannot parse the file.",
       "Syntax error: {msg}", "Fix the Python syntax at the line shown.",
       "def kernel(A):\n    for i in range(4)\n        A[i] = 0",
       {"surrogate": "Syntax error: lone surrogate {char} (not valid in UTF-8 source)"}),
    _c("io-error", "error", "input", "The file cannot be read or decoded.",
       "{problem}", "Check the path and its permissions, or the file's encoding.",
       "tilescope check missing.py   # no such file"),
    _c("bad-target", "error", "input", "The requested target is not one TileLang knows.",
       "{problem}", "Name a target TileLang knows, such as sm_90 or sm_80.",
       "tilescope check --target sm_1000 examples/gemm.py"),
    _c("no-kernels", "warning", "input", "The file defines no TileLang kernel.",
       "No TileLang kernels found: expected a @T.prim_func, a factory returning one, or a @tilelang.jit function",
       "Decorate a kernel with @T.prim_func or @tilelang.jit.",
       "def add(a, b):\n    return a + b   # plain Python, no kernel",
       {"nothing": "nothing was analysed"}),
    _c("no-kernel", "error", "input", "The kernel asked for is not in the file.",
       "No kernel named '{name}' in this file", "Name a kernel of the file.",
       "tilescope check --kernel no_such_kernel examples/gemm.py",
       {"puzzle": "The file defines no `{function}` function; the grader calls `{function}(...)`."}),
    _c("unknown-primitive", "information", "static", "A T.* name is not in this TileLang release.",
       "T.{name} is not in the catalog of {module} {version}",
       "Check the spelling; the message suggests the closest name.",
       "T.cleer(C_local)   # T.clear",
       {"guess": "T.{name} is not in the catalog of {module} {version}; did you mean T.{guess}?"}),
    _c("wrong-arguments", "information", "static", "A T.* call does not match the primitive's signature.",
       "T.{name} has no argument {arg!r}" + _RELEASE, "Call it as its signature in this release says.",
       "T.copy(A[by * 64, k * 32], A_shared, disable_tma=True, stages=2)   # no argument 'stages'",
       {"unknown_close": "T.{name} has no argument {arg!r}; did you mean {close}?" + _RELEASE,
        "positional": "T.{name} takes {expected} positional arguments but {given} were given" + _RELEASE,
        "twice": "T.{name} got multiple values for argument {arg!r}" + _RELEASE,
        "missing": "T.{name} is missing {names}" + _RELEASE}),
    _c("missing-values", "information", "static", "No value was found for a kernel's parameters, so shapes stay symbolic.",
       "no value for {names}: Tilescope looked for a '# tilescope:' directive above the def, the calls of {kernel} "
       "the file makes when run (from its __main__ block through its own functions, with argparse defaults), its "
       "other calls in this file, and parameter defaults; shapes using them stay symbolic",
       "Add a '# tilescope: NAME=VALUE' directive above the def (the quick fix writes it).",
       "def matmul(M, N, K):   # never called in the file, no directive\n    @T.prim_func\n    def main(A: T.Tensor((M, K), 'float16')): ..."),
    _c("not-evaluated", "information", "static", "Computing some values took more than the static tier's budget.",
       "not evaluated: computing the values here takes more than the static tier's budget ({limit}); values that "
       "depend on it stay unknown",
       "Give the values a kernel needs in a '# tilescope:' directive; the rest of the file is analysed.",
       "N = sum(range(10**9))   # computed at import, too long to evaluate while typing"),
    _c("not-analysed", "information", "static", "A block of the file is too deep or too large for Python to parse.",
       "not analysed: Python cannot parse this block ({error})",
       "Fix the syntax error; the rest of the file is still analysed.",
       "x = ((((((((((...))))))))))   # nested thousands deep: RecursionError"),
    _c("copy-shape", "error", "static", "T.copy between two whole buffers of different shapes.",
       "T.copy shapes differ: {src} is {src_shape} but {dst} is {dst_shape}", "Copy between regions of one shape.",
       "A_s = T.alloc_shared((64, 32), 'float16')\nB_s = T.alloc_shared((32, 64), 'float16')\nT.copy(A_s, B_s)"),
    _c("gemm-shape", "error", "static", "T.gemm operands do not agree in M, N or K.",
       _K, "Make A (M×K), B (K×N) and C (M×N) agree, transposing B where its shape says so.",
       "A_s = T.alloc_shared((64, 32), 'float16')\nB_s = T.alloc_shared((64, 32), 'float16')\n"
       "C_l = T.alloc_fragment((64, 64), 'float32')\nT.gemm(A_s, B_s, C_l)   # B is N×K: transpose_B=True",
       {"k_transposed": _K + "; {b} is {b0}×{b1}, so pass transpose_B={setting} or allocate it as {b1}×{b0}",
        "output": "T.gemm output shape: {a}·{b} is {m}×{n} but {c} is {c0}×{c1}"}),
    _c("gemm-dtype", "error", "static", "T.gemm inputs of two dtypes no MMA instruction mixes.",
       "T.gemm operands differ in dtype: {a} is {da}, {b} is {db}",
       "Use one input dtype (or int8 with uint8, int4 with uint4).",
       "A_s = T.alloc_shared((64, 32), 'float16')\nB_s = T.alloc_shared((32, 64), 'bfloat16')\nT.gemm(A_s, B_s, C_l)"),
    _c("gemm-accum-dtype", "error", "static", "T.gemm accumulates in a dtype its inputs cannot use.",
       "T.gemm accumulator {c} is {dc}; {da} inputs accumulate in {wanted}",
       "Accumulate in a dtype TileLang accepts for the inputs (float32 for float16).",
       "C_l = T.alloc_fragment((64, 64), 'int32')\nT.gemm(A_s, B_s, C_l)   # float16 inputs"),
    _c("gemm-uninitialised", "warning", "static", "A T.gemm accumulator is added to before anything writes it.",
       "{name} is accumulated by T.gemm before anything writes it: the first sum adds to uninitialised registers; "
       "call {alias}.clear({name}) before the loop",
       "Call T.clear on the accumulator before the loop (the quick fix inserts it).",
       "C_l = T.alloc_fragment((64, 64), 'float32')\nfor k in T.Pipelined(K // 32, num_stages=2):\n"
       "    T.gemm(A_s, B_s, C_l)   # no T.clear(C_l) before the loop"),
    _c("reduce-shape", "error", "static", "A reduction's result buffer does not have the shape the reduction keeps.",
       "T.{name} along dim {dim} of {src} ({shape}) gives {kept}, but {dst} is {b}",
       "Give the result the shape the reduction keeps.",
       "S = T.alloc_fragment((64, 128), 'float32')\nm = T.alloc_fragment((128,), 'float32')\n"
       "T.reduce_max(S, m, dim=1)   # keeps 64"),
    _c("shared-memory", "warning", "static", "The kernel's shared memory exceeds what the target gives a block.",
       "shared memory of at least {size} per block (live together from line {line}: {parts}) exceeds the "
       "{target} limit of {budget}",
       "Use smaller tiles or fewer pipeline stages.",
       "A_s = T.alloc_shared((256, 256), 'float32')   # 256 KiB, over sm_90's 227 KiB",
       {"planned": "shared memory of {size} per block (as TileLang lays out its buffers, pipeline copies included) "
                   "exceeds the {target} limit of {budget}"}),
    _c("load-error", "error", "compiler", "Running the file's top level raised an exception.",
       "The file raised {error} while loading: {message}", "Fix what the file runs at import.",
       "import tilelang.language as T\nraise ValueError('configure me first')",
       {"exit": "Loading the file called sys.exit({status!r})" + _EXITED,
        "exit_printed": "Loading the file called sys.exit({status!r}) after printing '{said}'" + _EXITED}),
    _c("missing-module", "warning", "compiler", "The file imports a module the analysing interpreter lacks.",
       "Cannot analyse this file: it imports '{module}', which the analysing interpreter ({python}) does not have. "
       "Install '{top}' there, or analyse with the interpreter that runs this program (tilescope check --python "
       "PATH, or the 'python' setting of the language server)",
       "Install it there, or analyse with the interpreter that runs the file (--python).",
       "import einops   # not installed where tilescope runs"),
    _c("needs-gpu", "warning", "compiler", "Building the kernel asks for a GPU, and analysis runs without one.",
       "{who} calls '{function}()', which needs a GPU" + _GPU,
       "Give the values in a '# tilescope: NAME=VALUE' directive, or record a real run (tilescope record).",
       "def matmul(M, N, K):\n    sms = torch.cuda.get_device_properties(0).multi_processor_count\n    ...",
       {"detect": "{who} asks TileLang to detect the GPU (target 'auto')" + _GPU,
        "detect_through": "{who} asks TileLang to detect the GPU (target 'auto') through '{function}()'" + _GPU,
        "plain": "{who} needs a GPU" + _GPU,
        "exit": "{who} called sys.exit({status!r}): it looks for a GPU" + _GPU,
        "exit_printed": "{who} called sys.exit({status!r}) after printing '{said}': it looks for a GPU" + _GPU,
        "worker": "Building kernel '{name}' ended the compiler worker because it asked for a GPU ({error})" + _GPU}),
    _c("not-a-kernel", "information", "compiler", "A function that looked like a kernel factory returned no T.prim_func.",
       "'{name}' returned {what}, not a T.prim_func, so it is not analysed as a kernel (a factory of factories, or a "
       "helper): analyse the kernel it makes instead",
       "Nothing to do if it is not a kernel; else return the prim_func.",
       "def make(M):\n    def factory(N):\n        @T.prim_func\n        def main(...): ...\n        return main\n    return factory"),
    _c("missing-args", "warning", "compiler", "A kernel factory was found without values for its parameters.",
       _MISSING_ARGS, "Add a '# tilescope: NAME=VALUE' directive or pass --arg NAME=VALUE.",
       "def matmul(M, N, K):   # never called, no directive\n    @T.prim_func\n    def main(...): ...\n    return main",
       {"dry_run": _MISSING_ARGS + " ({dry_run})"}),
    _c("record-incomplete", "warning", "compiler", "A recorded kernel instance cannot be rebuilt from its record.",
       "Kernel '{kernel}' cannot be rebuilt as recorded: {reasons}. Give the value in a '# tilescope: {names}' "
       "directive above the def",
       "Give the value in a '# tilescope: NAME=VALUE' directive, or record the program again.",
       "matmul(M, N, K, fn=lambda x: x)   # recorded: a lambda cannot be kept",
       {"stale": "Kernel '{kernel}' cannot be rebuilt as recorded: {error}. Record the program again "
                 "(tilescope record -- ...)"}),
    _c("device-profile", "information", "compiler", "The kernel asked the GPU while it was built; a datasheet answered.",
       "Kernel '{kernel}' asked for the GPU while it was built ({queries}); analysis runs without one, so the answers "
       "came from {profile}. A record of a run on the GPU ('tilescope record') gives the answers of the device it "
       "ran on",
       "Nothing to do; record a run on the GPU (tilescope record) to use its own answers.",
       "def matmul(M, N, K):\n    sms = tilelang.carver.arch.driver.get_num_sms()\n    ...",
       {"load": "Loading the file asked for the GPU ({queries}), in its own code or a module it imports; analysis "
                "runs without one, so the answers came from {profile}. A record of a run on the GPU "
                "('tilescope record') gives the answers of the device it ran on"}),
    _c("build-error", "error", "compiler", "Building the kernel's T.prim_func raised.",
       "Building kernel '{kernel}' failed: {error}",
       "Fix the kernel at the line shown (TileLang's own checks fail here).",
       "T.gemm(A_s, B_s, C_l)   # A_s is 64×32, B_s 64×64: TileLang's K check fails",
       {"assertion": "Building kernel '{kernel}' failed: an assertion in TileLang failed",
        "memory": "Building kernel '{kernel}' failed: it ran out of memory (the worker's memory limit stopped it)",
        "exit": "Building kernel '{kernel}' called sys.exit({status!r})" + _EXITED,
        "exit_printed": "Building kernel '{kernel}' called sys.exit({status!r}) after printing '{said}'" + _EXITED}),
    _c("compile-error", "error", "compiler", "Lowering or compiling the kernel failed in a pass of TileLang.",
       "Lowering kernel '{kernel}' failed in pass {stage}: {error}",
       "Fix the kernel; the pass and the buffer it names point at the line.",
       "for i, j in T.Parallel(64, 64):\n    C_l[i, j] = A_s[i, j] / 0   # rejected while lowering",
       {"no_pass": "Lowering kernel '{kernel}' failed: {error}",
        "cuda": "Compiling kernel '{kernel}' for cuda failed: {error}",
        "not_kernel": "not a kernel: {error}"}),
    _c("layout-inference", "error", "compiler", "No register layout satisfies every operation on some fragments.",
       "Layout inference failed: no single register layout satisfies every operation on {fragments}. Operations that "
       "constrain them: {uses}. A T.Parallel loop must index each fragment the way the operation that produced it "
       "laid it out (for example a row reduction's result by row, not by column). Compiler: {error}",
       "Index each fragment in T.Parallel the way the operation that produced it laid it out.",
       "T.reduce_max(S, m, dim=1)\nfor i, j in T.Parallel(64, 64):\n    S[i, j] -= m[j]   # m is per row: m[i]"),
    _c("shared-memory-overflow", "error", "compiler", "The lowered kernel needs more shared memory than the target allows.",
       "Kernel '{kernel}' needs {bytes} bytes of shared memory per block, over the {budget} bytes {target} allows "
       "(pipeline stages multiply every shared tile)",
       "Use smaller tiles or fewer pipeline stages.",
       "for k in T.Pipelined(K // 128, num_stages=4):   # four copies of 128×128 tiles\n    T.copy(A[...], A_s)"),
    _c("ascend-dialect", "error", "compiler",
       "An Ascend operation is taken from a module of this TileLang release that does not have it.",
       "'{name}' is an Ascend operation that TileLang {version} offers only as tilelang.ascend.language.{name}, not "
       "from {module} (newer TileLang moved it there): write `import tilelang.ascend.language as T`",
       "Import the Ascend dialect: `import tilelang.ascend.language as T` (and `from tilelang.ascend.language import "
       "simd`), or upgrade TileLang to the release the file was written for.",
       "import tilelang.language as T\n...\nwith T.SimtVF(threads=128):   # 0.1.15: tilelang.ascend.language.SimtVF",
       {"missing": "TileLang {version} has no '{name}' in {module} nor in tilelang.ascend.language: the file was "
                   "written for a newer release"}),
    _c("ascend-rejected", "error", "compiler", "TileLang's Ascend checks refuse the kernel.",
       "TileLang {version} refuses to lower kernel '{kernel}' for Ascend: {reason}",
       "Rewrite the statement as the message says (for example put a T.Parallel loop inside `with T.SimdVF():` or "
       "`with T.SimtVF(threads=...)`).",
       "for i in T.Parallel(128):   # outside a VF block\n    ub[i] = ub[i] * 2"),
    _c("ascend-memory-overflow", "warning", "compiler",
       "An Ascend kernel's buffers at one memory level need more than the core has.",
       "Kernel '{kernel}' needs {used} bytes of {level} ({buffers}, multi-buffer slots counted) over the {capacity} "
       "bytes one Ascend 950 core has: TileLang's scheduler (tl.AutoSchedule) stops with 'Z3 loop scheduling "
       "failed' unless the level is exempted with T.annotate_unlimit_memory",
       "Use smaller tiles or fewer slots (T.annotate_buffer_versions), or move a buffer to another level.",
       "ub = T.alloc_shared((256, 256), 'float32')   # 256 KB > 248 KB of Unified Buffer",
       {"manual": "Kernel '{kernel}' needs {used} bytes of {level} ({buffers}, multi-buffer slots counted) over the "
                  "{capacity} bytes one Ascend 950 core has: with auto-scheduling off TileLang does not check it, "
                  "and on the chip the later buffers would lie past the end of {level}"}),
    _c("autotune-config", "warning", "compiler", "An autotune config was named that the kernel does not have.",
       "config={choice} given, but kernel '{kernel}' is not autotuned", "Name a config by its index, or all.",
       "# tilescope: config=7   (the kernel's space has 4 configs)",
       {"unknown": "config={choice!r} does not name a config of '{kernel}': use 0..{last} or all",
        "unreadable": "Could not read the autotune configs of '{kernel}' ({error}); analysed it with its own arguments"}),
    _c("tilelang-warning", "warning", "compiler", "TileLang logged a warning about the kernel while lowering it.",
       "{warning}", "Follow TileLang's advice.",
       "T.copy(A[by * 64, 0], A_s)   # TileLang warns that the copy falls back from TMA"),
    _c("ptxas-error", "error", "compiler", "nvcc or ptxas rejected the CUDA TileLang generated.",
       "nvcc/ptxas rejected the generated CUDA: {error}", "Report it to TileLang with the kernel.",
       "tilescope check --ptxas kernel.py   # on a kernel whose generated CUDA does not compile"),
    _c("ptxas-spill", "warning", "compiler", "The kernel's registers spill to local memory.",
       "Registers spill to local memory: {stored} bytes stored, {loaded} bytes loaded ({registers} registers per "
       "thread)",
       "Use smaller fragments per thread or more threads.",
       "C_l = T.alloc_fragment((256, 256), 'float32')   # with threads=128: 512 floats a thread"),
    _c("ptxas-timeout", "warning", "compiler", "ptxas did not finish in time, so resource usage is unknown.",
       "ptxas took too long; resource usage is unknown",
       "Run again on a quieter machine, or leave --ptxas off for this file.",
       "tilescope check --ptxas kernel.py   # on a machine too busy for ptxas to finish"),
    _c("bank-conflict", "warning", "compiler", "Warps' shared-memory accesses collide in the same banks.",
       _CONFLICT + " by this {op}" + _COST + _PAD,
       "Do what the message says: allocate the tile with the padded last dimension it gives or, where it names no "
       "padding, give the tile a swizzled layout (T.annotate_layout with tilelang.layout.make_swizzled_layout).",
       "A_s = T.alloc_shared((32, 32), 'float32')\nfor i, j in T.Parallel(32, 32):\n"
       "    B[j, i] = A_s[i, j]   # a column per warp: 32-way; allocate (32, 32 + 1)",
       {"swizzle": _CONFLICT + " by this {op}" + _COST + _SWIZZLE,
        "unattributed": _CONFLICT + _COST + _PAD,
        "unattributed_swizzle": _CONFLICT + _COST + _SWIZZLE}),
    _c("internal-error", "error", "compiler", "Tilescope itself failed; the kernel may be fine.",
       "Tilescope failed while analysing kernel '{kernel}': {error}", "Report it with the file that caused it.",
       "(no kernel causes it: a bug of Tilescope)",
       {"file": "Tilescope failed on this file: {error}",
        "worker": "The compiler worker failed: {error}"}),
    _c("data-race", "error", "hazards", "Two threads or blocks write one element with nothing ordering them.",
       "{first} and {second} both write {element} in one statement, nothing ordering them: a data race; use "
       "T.atomic_add, a reduction, or one writer",
       "Use T.atomic_add, a reduction (T.reduce_*), disjoint tiles per block, or one writer.",
       "for i in T.Parallel(128):\n    B[0] = A[i]   # every thread writes B[0]",
       {"blocks": "Blocks {first} and {second} both touch {element} ({first_side} at line {line}, {second_side} "
                  "here) and blocks are never ordered; use T.atomic_add or disjoint tiles",
        "suspected": _SUSPECTS + "the interpreter did not reproduce it ({ran})",
        "suspected_not_run": _SUSPECTS + "the interpreter could not run this kernel",
        "threads": "{first} and {second} both write {element} (lines {line} and {other_line}) with no barrier "
                   "between them: a data race; use T.atomic_add or one writer{guess}"}),
    _c("missing-barrier", "error", "hazards", "A thread overwrites an element another thread reads in the same statement.",
       "{writer} overwrites {element} while {reader} reads it in the same statement (line {line}): no barrier can "
       "separate them; read into a fragment or a second buffer first",
       "Read into a fragment or a second buffer first, then write: TileLang places the barrier between the two "
       "statements.",
       "for i in T.Parallel(128):\n    A_s[i] = A_s[127 - i]   # reverses in place",
       {"threads": "{second} {second_verb} {element} here while {first} {first_verb} it at line {line}, with no "
                   "barrier between them; add T.sync_threads() between the two{guess}"}),
    _c("out-of-bounds", "error", "hazards", "The kernel reads or writes outside a buffer's shape.",
       "Reads " + _OOB, "Guard the access (if ... < N), size the buffer for its halo, or keep TileLang's safe-memory "
       "pass on.",
       "for i in T.Parallel(128):\n    B[i] = A[i + 1]   # A has 128 elements",
       {"read_many": "Reads " + _OOB + " ({count} elements)",
        "write": "Writes " + _OOB,
        "write_many": "Writes " + _OOB + " ({count} elements)"}),
    _c("uninitialised-read", "error", "hazards", "The kernel reads an element nothing wrote first.",
       _READ_NOWHERE,
       "Write it first: T.clear or T.fill the accumulator, copy the whole tile, or load it for the tail block too.",
       "C_l = T.alloc_fragment((64,), 'float32')\nfor i in T.Parallel(64):\n    C[i] = C_l[i]   # never written",
       {"many": _READ_NOWHERE + " ({count} elements)"}),
    _c("timeout", "error", "worker", "Analysing a kernel did not finish in time.",
       "Analysing kernel '{name}' did not finish within {seconds:g} s: building it may loop forever (it had "
       "{phase}; {after})",
       "Look for a loop that never ends, or raise the timeout.",
       "def matmul(M, N, K):\n    while True:   # the factory never returns\n        pass",
       {"loading": "Loading this file for kernel '{name}' did not finish within {seconds:g} s: its top level may "
                   "loop forever ({after})",
        "start": "Kernel '{name}' was not analysed within {seconds:g} s: the compiler worker was still starting "
                 "(importing TileLang); it goes on starting for the next analysis"}),
    _c("worker-crash", "error", "worker", "The compiler worker died while building a kernel.",
       "The compiler worker died while building kernel '{name}' ({error}); it may have exited the process, crashed "
       "in native code or exceeded its memory limit ({after})",
       "Look for an exit, a native crash or a large allocation at that kernel.",
       "def matmul(M, N, K):\n    os._exit(3)   # ends the worker itself"),
    _c("worker-channel", "error", "worker", "Code the worker ran broke its protocol with Tilescope.",
       "Building kernel '{name}' broke the compiler worker's protocol ({error}); {after}",
       "Leave the worker's private descriptors alone.",
       "def matmul(M, N, K):\n    os.write(1, b'noise')   # writes into the worker's reply channel"),
    _c("worker-leftovers", "error", "worker", "Building a kernel left threads or hooks running in the worker.",
       "Building kernel '{name}' left the compiler worker changed ({error}); {after}",
       "Do not leave threads or trace hooks running after the kernel is built.",
       "def matmul(M, N, K):\n    threading.Thread(target=forever, daemon=True).start()\n    ..."),
    _c("supervisor-lost", "error", "worker", "Code the worker ran stopped or ended the worker's supervisor.",
       "Building kernel '{name}' stopped or ended the compiler worker's supervisor ({error}); {after}",
       "Do not signal or kill the parent process.",
       "def matmul(M, N, K):\n    os.kill(os.getppid(), signal.SIGSTOP)"),
    _c("supervised", "warning", "worker", "Code the worker ran started processes or sent signals, which were stopped.",
       "While kernel '{kernel}' was built, {note}", "Start no processes and send no signals while building.",
       "def matmul(M, N, K):\n    subprocess.Popen(['sleep', '100'])   # ended when the build is done",
       {"file": "While this file was built, {note}"}),
    _c("stopped", "error", "worker", "The compiler tier was stopped before it analysed the file.",
       "the compiler tier was stopped", "Nothing to do: trust was revoked or the server is ending.",
       "(the language server stops the compiler tier when the workspace's trust is revoked)"),
    _c("tilelang-version", "error", "worker", "The interpreter that analyses has a TileLang release Tilescope does not support.",
       "{error} (interpreter {python})", "Install a supported release there.",
       "pip install tilelang==0.1.0   # in the interpreter tilescope analyses with"),
    _c("tilelang-import", "error", "worker", "Importing TileLang failed in the interpreter that analyses.",
       "importing TileLang {version} failed: {error} (interpreter {python})", "Repair that interpreter's TileLang.",
       "(a TileLang whose native library does not load in the interpreter tilescope analyses with)"),
    _c("worker-start", "error", "editor", "The compiler worker could not be started.",
       _WORKER_START, "Check the tilescope.python setting (or --python).",
       "tilescope check --python /no/such/python examples/gemm.py",
       {"printed": _WORKER_START + "; it printed: {printed}",
        "refused": "{error} (interpreter {python})",
        "editor": "The compiler tier could not run ({error}); check the tilescope.python setting"}),
    _c("not-interpretable", "error", "puzzles", "The kernel uses something the CPU tile interpreter does not run.",
       "{reason}", "Use the primitives the interpreter supports, or grade on a GPU.",
       "T.call_extern('int32', '__nanosleep', 100)   # CUDA only: the interpreter cannot run it"),
    _c("out-of-memory", "error", "puzzles", "The file's code ran out of memory while the grader loaded it.",
       "The file's code ran out of memory (MemoryError; the loader allows {limit_gib} GiB).",
       "Allocate less when the file is loaded.",
       "table = [0] * 10**11   # at the top of the file"),
    # The Ascend dialect (issue 37): what TileLang 0.1.15 itself refuses, each checked against plain lowering.
    _c("dialect-primitive", "error", "static",
       "A T.* name the language module the file imports lacks: this release has it elsewhere, or, for a backend "
       "dialect (tilelang.ascend.language), nowhere.",
       "T.{name} is not in {module} {version}, which this file imports as {alias}, so building the kernel "
       "raises AttributeError; TileLang {version} has it in {home}: import {home} as {alias}",
       "Import the language module that has the name (Ascend's operations: import tilelang.ascend.language as T).",
       "import tilelang.language as T\n...\nA_l1 = T.alloc_l1((128, 64), T.bfloat16)   # tilelang.ascend.language's",
       {"import": "{module} {version} has no {name}, so importing the file raises ImportError; TileLang {version} "
                  "has it in {home}: from {home} import {name}",
        "absent": "T.{name} is not in {module} {version} (imported as {alias}) nor in any other language module "
                  "of that release, so building the kernel raises AttributeError",
        "absent_guess": "T.{name} is not in {module} {version} (imported as {alias}) nor in any other language "
                        "module of that release, so building the kernel raises AttributeError; did you mean "
                        "T.{guess}?"}),
    _c("ascend-launch", "error", "static",
       "An Ascend kernel's T.Kernel was given threads or more than one grid extent, which the Ascend launch refuses.",
       "T.Kernel of {module} takes one grid extent (a 1-D grid of AI cores) and no {given}=: TileLang {version} "
       "raises TypeError; threads belong to a vector region, with T.SimtVF(threads=...)",
       "Give T.Kernel the number of blocks alone, and open a 'with T.SimtVF(threads=N):' region for SIMT code.",
       "with T.Kernel(blocks, threads=128) as bx:   # Ascend: T.Kernel(blocks), then with T.SimtVF(threads=128):",
       {"grid": "T.Kernel of {module} takes one grid extent (a 1-D grid of AI cores), not {count}: TileLang {version} "
                "raises ValueError; flatten the grid (T.Kernel(X * Y) as b, with b // Y and b % Y)"}),
    _c("ascend-vector-region", "error", "static",
       "Ascend code that must run in a vector region (T.SimtVF or T.SimdVF), or must not, is on the wrong side of one.",
       "{kernel}: T.Parallel over {loop} is outside a vector region; on Ascend a parallel loop runs in "
       "'with T.SimtVF(threads=...)' or 'with T.SimdVF()' (TileLang's Ascend semantic check raises ValueError)",
       "Put the code in a 'with T.SimtVF(threads=N):' (or 'with T.SimdVF():') region, or move the copy out of it.",
       "with T.Kernel(blocks) as bx:\n    for i in T.Parallel(128):   # needs: with T.SimtVF(threads=128):\n"
       "        x_ub[i] = x_ub[i] * 2",
       {"cast": "{kernel}: T.copy from {src} ({src_dtype}) to {dst} ({dst_dtype}) outside a vector region is a DMA, "
                "which cannot convert dtypes (TileLang's Ascend semantic check raises ValueError); cast in a "
                "'with T.SimtVF(...)' or 'with T.SimdVF()' region",
        "global": "{kernel}: T.copy between {src} and {dst} touches global memory inside T.SimdVF, which cannot "
                  "reach it (TileLang's Ascend semantic check raises ValueError); copy outside the SIMD region"}),
)}
# fmt: on

HAZARD_CODES = frozenset(c.code for c in CODES.values() if c.tier == "hazards")
"""The codes of the hazard check: an error among them is a finding about the kernel's run, not a
failure to build it, so the check's verdict and the editor's merge treat them apart."""


def placeholders(template: str) -> set[str]:
    """The fields a template names (``{ways}``, ``{wavefronts:g}`` and ``{arg!r}`` name ``ways``,
    ``wavefronts`` and ``arg``)."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def diagnostic(
    code: CodeName,
    span: Span,
    *,
    form: str | None = None,
    severity: Severity | None = None,
    kernel: str | None = None,
    detail: str | None = None,
    related: Sequence[Related] = (),
    witness: str | None = None,
    fields: Mapping[str, object] | None = None,
    **named: object,
) -> Diagnostic:
    """The diagnostic ``code`` at ``span``, its message the code's template (or ``form``) filled with
    the ``named`` fields and those a site gathered in ``fields`` (and ``kernel`` where the template
    names it), its severity the registry's unless a site has a reason for another. A field the
    template does not name, or a name it lacks, is a bug of the site: it raises rather than print a
    message with a hole."""
    entry = CODES[code]
    template = entry.template(form)
    given = {**(fields or {}), **named}
    if "kernel" in placeholders(template) and "kernel" not in given:
        given["kernel"] = kernel
    if set(given) != placeholders(template):
        raise TypeError(f"{code} ({form or 'message'}) names {sorted(placeholders(template))}, given {sorted(given)}")
    return Diagnostic(
        severity or entry.severity,
        template.format(**given),
        span,
        code,
        kernel=kernel,
        detail=detail,
        related=list(related),
        witness=witness,
    )


_PLACEHOLDER = re.compile(r"\{(\w+)(?:![rsa])?(?::[^}]*)?\}")


def readable(template: str) -> str:
    """A template as a reader sees it: each placeholder as its name in capitals (``{ways}-way`` is
    ``WAYS-way``), the rest as written."""
    return _PLACEHOLDER.sub(lambda m: m.group(1).upper(), template)


def explain(code: str) -> str:
    """``tilescope explain CODE``: what a code means, where it comes from, what it says, a minimal
    example and what to do."""
    entry = CODES[code]
    example = "\n".join(f"        {line}" for line in entry.example.splitlines())
    return (
        f"{entry.code} ({entry.severity}, from {TIERS[entry.tier]})\n"
        f"  {entry.summary}\n"
        f"  says: {readable(entry.message)}\n"
        f"  example:\n{example}\n"
        f"  fix:  {entry.fix}\n"
    )


def schema_list() -> str:
    """The code list of ``SCHEMA.md``: a table row per code, by tier."""
    rows = ["| code | severity | tier | fix |", "|---|---|---|---|"]
    rows += [f"| `{c.code}` | {c.severity} | {c.tier} | {c.fix} |" for c in CODES.values()]
    return "\n".join(rows) + "\n"


_MORE = "Run `tilescope check FILE` for the full report; `tilescope explain CODE` gives an example."


def sarif_rule(code: str) -> dict[str, object]:
    """A SARIF ``reportingDescriptor``: the plain-words summary, the message as a full description
    (placeholders in capitals), the fix as help in text and Markdown, the default level."""
    entry = CODES.get(code)
    if entry is None:
        return {"id": code, "name": code}
    level = {"error": "error", "warning": "warning"}.get(entry.severity, "note")
    example = "\n".join(f"    {line}" for line in entry.example.splitlines())
    return {
        "id": code,
        "name": code,
        "shortDescription": {"text": entry.summary},
        "fullDescription": {"text": readable(entry.message)},
        "help": {
            "text": entry.fix,
            "markdown": f"{entry.fix}\n\nFor example:\n\n{example}\n\n{_MORE.replace('CODE', code)}",
        },
        "defaultConfiguration": {"level": level},
        "properties": {"tier": entry.tier},
    }


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse names no public type for it
    parser = subparsers.add_parser("explain", help="what a diagnostic code means and how to fix it")
    parser.add_argument("code", nargs="?", help="the code (default: every code)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="the registry as JSON")
    shape.add_argument("--markdown", action="store_true", help="the code list as SCHEMA.md has it")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    chosen = [args.code] if args.code else list(CODES)
    unknown = [c for c in chosen if c not in CODES]
    if unknown:
        print(f"tilescope explain: no diagnostic code {unknown[0]!r} (see 'tilescope explain')", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(CODES[c]) for c in chosen], indent=2))
    elif args.markdown:
        print(schema_list(), end="")
    else:
        print("\n".join(explain(c) for c in chosen), end="")
    return 0

"""Every diagnostic code Tilescope emits, in one table: its severity, the tier that finds it, what it
says and how to fix it.

``SCHEMA.md``'s code list, the SARIF rules of ``tilescope check --format sarif`` and ``tilescope
explain`` are written from this table, and ``tests/core/test_codes.py`` checks that every code the
source emits is here and every code here is emitted (and expected by a test). A new diagnostic is
one line in ``CODES``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from typing import Literal

from tilescope.core.model import Severity

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


@dataclass(frozen=True)
class Code:
    code: str
    severity: Severity
    """The usual severity; a few codes are emitted at another where the case is milder (``needs-gpu``)."""
    tier: Tier
    message: str
    """What the diagnostic says, with ``{placeholders}`` for what varies."""
    fix: str


def _c(code: str, severity: Severity, tier: Tier, message: str, fix: str) -> Code:
    return Code(code, severity, tier, message, fix)


# One line a code, in the order SCHEMA.md lists them: code, severity, tier, message, fix.
# fmt: off
CODES: dict[str, Code] = {c.code: c for c in (
    _c("syntax-error", "error", "input", "Syntax error: {msg}", "Fix the Python syntax at the line shown."),
    _c("io-error", "error", "input", "Cannot read file: {error}", "Check the path and its permissions."),
    _c("bad-target", "error", "input", "{problem}", "Name a target TileLang knows, such as sm_90 or sm_80."),
    _c("no-kernels", "warning", "input", "No TileLang kernels found in this file", "Decorate a kernel with @T.prim_func or @tilelang.jit."),
    _c("no-kernel", "error", "input", "No kernel named '{kernel}' in this file", "Name a kernel of the file."),
    _c("unknown-primitive", "information", "static", "T.{name} is not in the catalog of tilelang.language {version}", "Check the spelling; the note suggests the closest name."),
    _c("wrong-arguments", "information", "static", "T.{name} has no argument {arg}, is missing {args}, ...", "Call it as its signature in this release says."),
    _c("missing-values", "information", "static", "no value for {names}", "Add a '# tilescope: NAME=VALUE' directive above the def (the quick fix writes it)."),
    _c("not-evaluated", "information", "static", "not evaluated: computing the values here takes more than the static tier's budget ({limit})", "Give the values a kernel needs in a '# tilescope:' directive; the rest of the file is analysed."),
    _c("not-analysed", "information", "static", "not analysed: Python cannot parse this block ({error})", "Fix the syntax error; the rest of the file is still analysed."),
    _c("copy-shape", "error", "static", "T.copy shapes differ: {src} is {a} but {dst} is {b}", "Copy between regions of one shape."),
    _c("gemm-shape", "error", "static", "T.gemm operands do not agree in M, N or K: {detail}", "Make A (M×K), B (K×N) and C (M×N) agree."),
    _c("gemm-dtype", "error", "static", "T.gemm inputs {a} and {b} cannot be mixed", "Use one input dtype (or int8 with uint8, int4 with uint4)."),
    _c("gemm-accum-dtype", "error", "static", "T.gemm of {a} cannot accumulate in {acc}", "Accumulate in a dtype TileLang accepts for the inputs (float32 for float16)."),
    _c("gemm-uninitialised", "warning", "static", "{name} is accumulated by T.gemm before anything writes it", "Call T.clear({name}) before the loop (the quick fix inserts it)."),
    _c("reduce-shape", "error", "static", "T.{name} along dim {dim} of {src} gives {kept}, but {dst} is {b}", "Give the result the shape the reduction keeps."),
    _c("shared-memory", "warning", "static", "shared memory of {size} per block exceeds the {target} limit of {budget}", "Use smaller tiles or fewer pipeline stages."),
    _c("load-error", "error", "compiler", "The file raised {error} while loading: {message}", "Fix what the file runs at import."),
    _c("missing-module", "warning", "compiler", "Cannot analyse this file: it imports '{module}', which {python} does not have", "Install it there, or analyse with the interpreter that runs the file (--python)."),
    _c("needs-gpu", "warning", "compiler", "Kernel '{kernel}' needs a GPU, and analysis runs without one", "Give the values in a '# tilescope: NAME=VALUE' directive, or record a real run (tilescope record)."),
    _c("not-a-kernel", "information", "compiler", "'{name}' returned {what}, not a T.prim_func", "Nothing to do if it is not a kernel; else return the prim_func."),
    _c("missing-args", "warning", "compiler", "Kernel '{kernel}' needs values for {names}", "Add a '# tilescope: NAME=VALUE' directive or pass --arg NAME=VALUE."),
    _c("record-incomplete", "warning", "compiler", "Kernel '{kernel}' cannot be rebuilt as recorded: {reasons}", "Give the value in a '# tilescope: NAME=VALUE' directive, or record the program again."),
    _c("device-profile", "information", "compiler", "Kernel '{kernel}' asked for the GPU while it was built ({queries}); the answers came from {profile}", "Nothing to do; record a run on the GPU (tilescope record) to use its own answers."),
    _c("build-error", "error", "compiler", "Building kernel '{kernel}' failed: {error}", "Fix the kernel at the line shown (TileLang's own checks fail here)."),
    _c("compile-error", "error", "compiler", "Lowering kernel '{kernel}' failed in pass {pass}: {error}", "Fix the kernel; the pass and the buffer it names point at the line."),
    _c("layout-inference", "error", "compiler", "Layout inference failed: no single register layout satisfies every operation on {fragments}", "Index each fragment in T.Parallel the way the operation that produced it laid it out."),
    _c("shared-memory-overflow", "error", "compiler", "Kernel '{kernel}' needs {bytes} bytes of shared memory per block, over the {budget} bytes {target} allows", "Use smaller tiles or fewer pipeline stages."),
    _c("autotune-config", "warning", "compiler", "config={choice} does not name a config of '{kernel}'", "Name a config by its index, or all."),
    _c("tilelang-warning", "warning", "compiler", "{message} (a warning TileLang logged while lowering)", "Follow TileLang's advice."),
    _c("ptxas-error", "error", "compiler", "nvcc/ptxas rejected the generated CUDA: {error}", "Report it to TileLang with the kernel."),
    _c("ptxas-spill", "warning", "compiler", "Registers spill to local memory: {stored} bytes stored, {loaded} bytes loaded", "Use smaller fragments per thread or more threads."),
    _c("ptxas-timeout", "warning", "compiler", "ptxas took too long; resource usage is unknown", "Run again on a quieter machine, or leave --ptxas off for this file."),
    _c("bank-conflict", "warning", "compiler", "{ways}-way shared-memory bank conflict: {what} of '{buffer}' take {wavefronts} wavefronts per warp request instead of {ideal}", "Pad the tile's last dimension as the message says, or give it a swizzled layout with T.annotate_layout."),
    _c("internal-error", "error", "compiler", "{error} (Tilescope failed, not the kernel)", "Report it with the file that caused it."),
    _c("data-race", "error", "hazards", "Thread {a} and thread {b} of block {block} both write {buffer}[{index}] in one statement, nothing ordering them", "Use T.atomic_add, a reduction (T.reduce_*), disjoint tiles per block, or one writer."),
    _c("missing-barrier", "error", "hazards", "Thread {a} overwrites {buffer}[{index}] while thread {b} reads it in the same statement", "Read into a fragment or a second buffer first, then write: TileLang places the barrier between the two statements."),
    _c("out-of-bounds", "error", "hazards", "{Reads|Writes} {buffer}[{index}], outside its shape {shape}", "Guard the access (if ... < N), size the buffer for its halo, or keep TileLang's safe-memory pass on."),
    _c("uninitialised-read", "error", "hazards", "Reads {buffer}[{index}], which nothing wrote first", "Write it first: T.clear or T.fill the accumulator, copy the whole tile, or load it for the tail block too."),
    _c("timeout", "error", "worker", "Analysing kernel '{kernel}' did not finish within {seconds} s", "Look for a loop that never ends, or raise the timeout."),
    _c("worker-crash", "error", "worker", "The compiler worker died while building kernel '{kernel}' ({why})", "Look for an exit, a native crash or a large allocation at that kernel."),
    _c("worker-channel", "error", "worker", "{error} (the worker could not answer over its protocol)", "Leave the worker's private descriptors alone."),
    _c("worker-leftovers", "error", "worker", "Building kernel '{kernel}' left the compiler worker changed ({what}); the worker was replaced", "Do not leave threads or trace hooks running after the kernel is built."),
    _c("supervisor-lost", "error", "worker", "{error} (the code stopped or ended the worker's supervisor)", "Do not signal or kill the parent process."),
    _c("supervised", "warning", "worker", "{what} while building (ended or ignored)", "Start no processes and send no signals while building."),
    _c("stopped", "error", "worker", "the compiler tier was stopped", "Nothing to do: trust was revoked or the server is ending."),
    _c("tilelang-version", "error", "worker", "{problem} (a TileLang release Tilescope does not support)", "Install a supported release there."),
    _c("tilelang-import", "error", "worker", "importing TileLang {version} failed: {error}", "Repair that interpreter's TileLang."),
    _c("worker-start", "error", "editor", "The compiler tier could not run ({error})", "Check the tilescope.python setting."),
    _c("not-interpretable", "error", "puzzles", "{error} (outside what the CPU interpreter runs)", "Use the primitives the interpreter supports, or grade on a GPU."),
    _c("out-of-memory", "error", "puzzles", "The file's code ran out of memory (MemoryError)", "Allocate less when the file is loaded."),
)}
# fmt: on

HAZARD_CODES = frozenset(c.code for c in CODES.values() if c.tier == "hazards")
"""The codes of the hazard check: an error among them is a finding about the kernel's run, not a
failure to build it, so the check's verdict and the editor's merge treat them apart."""


def explain(code: str) -> str:
    """``tilescope explain CODE``: what a code means, where it comes from and what to do."""
    entry = CODES[code]
    return f"{entry.code} ({entry.severity}, from {TIERS[entry.tier]})\n  says: {entry.message}\n  fix:  {entry.fix}\n"


def schema_list() -> str:
    """The code list of ``SCHEMA.md``: a table row per code, by tier."""
    rows = ["| code | severity | tier | fix |", "|---|---|---|---|"]
    rows += [f"| `{c.code}` | {c.severity} | {c.tier} | {c.fix} |" for c in CODES.values()]
    return "\n".join(rows) + "\n"


def sarif_rule(code: str) -> dict[str, object]:
    """A SARIF ``reportingDescriptor``: short text, the fix as help, the default level."""
    entry = CODES.get(code)
    if entry is None:
        return {"id": code, "name": code}
    level = {"error": "error", "warning": "warning"}.get(entry.severity, "note")
    return {
        "id": code,
        "name": code,
        "shortDescription": {"text": entry.message},
        "help": {"text": entry.fix},
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

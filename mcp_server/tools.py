"""The MCP tools: one table of plain handlers over the core's views, with typed inputs and answers.

Each row names a tool, its input record and answer record (``schemas``: their JSON schemas are the
tool's ``inputSchema`` and ``outputSchema``) and its handler (``handlers``). The protocol side
(``server``) lists this table and calls the rows; adding a tool is one row here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter
from tilescope.mcp import handlers
from tilescope.mcp.schemas import (
    CheckAnswer,
    ExplainAnswer,
    ExplainInput,
    FileInput,
    LayoutAnswer,
    LayoutInput,
    PassDiffAnswer,
    PassDiffInput,
    PassesAnswer,
    ProfileAnswer,
    ProfileInput,
    PuzzleAnswer,
    PuzzleInput,
    RunAnswer,
    RunInput,
    VariantsAnswer,
    VariantsInput,
)
from tilescope.mcp.session import Session

In = TypeVar("In")


@dataclass(frozen=True)
class ToolSpec(Generic[In]):
    name: str
    title: str
    description: str
    given: type[In]
    answer: type
    handler: Callable[[Session, In], tuple[dict[str, Any], bool]]

    def input_schema(self) -> dict[str, Any]:
        return TypeAdapter(self.given).json_schema()

    def output_schema(self) -> dict[str, Any]:
        return TypeAdapter(self.answer).json_schema(mode="serialization")

    def parse(self, arguments: dict[str, Any]) -> In:
        return TypeAdapter(self.given).validate_python(arguments)


TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "check",
        "Analyse kernels with the real compiler",
        "Lower a file's TileLang kernels with the real TileLang compiler (the release of the analysing "
        "interpreter) and answer what it decided: buffers with shapes, dtypes, scopes and lines; the "
        "launch; inferred layouts; pipelines; shared memory; and every diagnostic at its line. "
        "detail=full adds the complete record `tilescope check --json` prints.",
        FileInput,
        CheckAnswer,
        handlers.check,
    ),
    ToolSpec(
        "layout",
        "One buffer's inferred layout",
        "The thread and register (fragment) or bank (shared) map TileLang inferred for one buffer, as "
        "`tilescope layout --json` prints it, with the bank-conflict figures of its accesses.",
        LayoutInput,
        LayoutAnswer,
        handlers.layout,
    ),
    ToolSpec(
        "passes",
        "The compiler's passes",
        "Every pass TileLang ran on the kernel, in order, with its phase, time, whether it changed the IR, "
        "and what it does; the index is what `pass_diff` takes.",
        FileInput,
        PassesAnswer,
        handlers.passes,
    ),
    ToolSpec(
        "pass_diff",
        "The IR before and after one pass",
        "The unified diff of the IR (TVMScript) across pass `index`, each row with the Python source line "
        "TileLang kept for it.",
        PassDiffInput,
        PassDiffAnswer,
        handlers.pass_diff,
    ),
    ToolSpec(
        "variants",
        "Every target and autotune config",
        "Lower the kernel for several targets and every autotune config (never running the autotuner): "
        "which fit, and each one's threads, shared memory and registers, as `tilescope variants --json`.",
        VariantsInput,
        VariantsAnswer,
        handlers.variants,
    ),
    ToolSpec(
        "run",
        "Run a kernel on the CPU",
        "Interpret one kernel on the CPU with Tilescope's tile interpreter, no GPU needed: output "
        "statistics, NaN/Inf, never-written elements, out-of-bounds and uninitialised accesses with lines.",
        RunInput,
        RunAnswer,
        handlers.run,
    ),
    ToolSpec(
        "profile",
        "Why a kernel is slow",
        "Static speed figures (occupancy and what limits it, shared-memory bank conflicts per access, the "
        "roofline bound) and, on a host with an NVIDIA GPU, the measured time and Nsight Compute's conflicts "
        "and occupancy beside them, as `tilescope profile --json`. Without a GPU it says so.",
        ProfileInput,
        ProfileAnswer,
        handlers.profile,
    ),
    ToolSpec(
        "explain",
        "What a diagnostic code means",
        "A diagnostic code's usual severity, the part of Tilescope that emits it, its message and how to fix it, "
        "as `tilescope explain CODE` prints it.",
        ExplainInput,
        ExplainAnswer,
        handlers.explain,
    ),
    ToolSpec(
        "puzzles_check",
        "Grade a puzzle solution",
        "Grade a solution of one of Tilescope's TileLang puzzles with the sealed grader (fixed, hidden and timed "
        "cases; on the CPU tile interpreter where there is no GPU): the verdict, each case, and stars against "
        "torch on a GPU, as `tilescope puzzles check --json`.",
        PuzzleInput,
        PuzzleAnswer,
        handlers.puzzles_check,
    ),
]


def find(name: str) -> ToolSpec[Any] | None:
    return next((tool for tool in TOOLS if tool.name == name), None)

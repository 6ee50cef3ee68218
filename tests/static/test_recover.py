"""Broken files still yield every kernel that can be recovered, and the syntax error where it is."""

from __future__ import annotations

import random
from pathlib import Path

from tilescope.core.model import dumps
from tilescope.core.static import analyze_source
from tilescope.core.static.recover import clear_cache, parse_tolerant
from tilescope.core.static.split import split_blocks

FIXTURES = Path(__file__).resolve().parents[1] / "lsp" / "fixtures"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GEMM = (EXAMPLES / "gemm.py").read_text()


def test_syntax_error_in_one_kernel_leaves_the_next_one_whole() -> None:
    static = analyze_source((FIXTURES / "syntax_error_mid.py.txt").read_text())
    assert [k.ref.name for k in static.kernels] == ["broken", "intact"]
    (error,) = static.diagnostics
    assert (error.code, error.span.line, error.message) == ("syntax-error", 11, "Syntax error: '(' was never closed")
    intact = static.kernels[1]
    assert [d.buffer.name for d in intact.buffers] == ["X", "X_local"]


def test_the_broken_kernel_keeps_the_lines_around_its_error() -> None:
    broken = analyze_source((FIXTURES / "syntax_error_mid.py.txt").read_text()).kernels[0]
    assert [d.buffer.name for d in broken.buffers] == ["A", "A_shared", "A_local"]


def test_missing_colon_on_pipelined_loop_keeps_its_body() -> None:
    source = GEMM.replace("num_stages=3):", "num_stages=3)")
    static = analyze_source(source)
    (error,) = static.diagnostics
    assert error.span.line == 20 and error.message == "Syntax error: expected ':'"
    (kernel,) = static.kernels
    assert [p.num_stages for p in kernel.pipelines] == [3]
    assert kernel.buffer("A_shared").stages == 3


def test_truncated_file_still_parses_what_came_before() -> None:
    source = GEMM[: GEMM.index("T.gemm(") + len("T.gemm(A_sh")]
    (kernel,) = analyze_source(source).kernels
    assert [d.buffer.name for d in kernel.buffers][-1] == "C_local"


def test_blocks_follow_top_level_statements() -> None:
    lines = "import a\n\n@deco\ndef f(\n    x,\n):\n    return '''\ndef not_a_block\n'''\nelse_ = 1\n".splitlines(True)
    assert split_blocks(lines) == [(1, 2), (3, 9), (10, 10)]


def test_valid_file_parses_without_repairs() -> None:
    parsed = parse_tolerant(GEMM)
    assert parsed.errors == [] and parsed.repaired_lines == frozenset()


def test_reused_blocks_give_the_same_answers_as_a_cold_parse() -> None:
    """Blocks found again at other lines are moved, not re-read: the result must not differ."""
    rng = random.Random(7)
    sources = [p.read_text() for p in sorted(EXAMPLES.glob("*.py"))] + [(FIXTURES / "budgets.py").read_text()]
    for _ in range(150):
        lines = rng.choice(sources).splitlines(keepends=True)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(lines) + 1)
            lines[at:at] = [rng.choice(["\n", "# moved\n", "X = 1\n", "def f(:\n", lines[rng.randrange(len(lines))]])]
        text = "".join(lines)
        warm = dumps(analyze_source(text))
        clear_cache()
        assert dumps(analyze_source(text)) == warm

"""The incremental analysis an editor runs says exactly what a fresh full analysis says.

Random edits (characters, line breaks, deleted and duplicated lines, brackets, quotes, imports,
module constants, renamed kernels, lone surrogates, NUL bytes, a byte-order mark, undo) to files
of TileLang's examples and to the generated large files; after each, ``IncrementalAnalysis.analyze``
is compared with ``analyze_source`` on a fresh block cache and lexer, as JSON (every kernel,
binding, buffer, diagnostic, fix and ``T.*`` use: everything the language server publishes or
answers from).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from tilescope.core.model import to_json
from tilescope.core.static import BlockCache, StaticFile, analyze_source
from tilescope.core.static.incremental import IncrementalAnalysis
from tilescope.core.static.split import forget_lexed

from benchmarks.large_files import many_kernels, many_lines
from tests.static.test_corpus import CORPUS, valid_files

_SNIPPETS = (
    " ",
    "\n",
    "    ",
    "(",
    ")",
    "[",
    '"',
    '"""',
    "'",
    "#",
    ":",
    "\\",
    "T.",
    "x",
    "1",
    "\r",
    "\ud800",
    "\x00",
    "\x0c",
    "\ndef helper(n):\n    return n * 2\n",
    "\nimport tilelang.language as T\n",
    "\nimport tilelang.ascend.language as T\n",
    "\nblock_M = 64\n",
    "\n# tilescope: M=256 N=256 K=256\n",
    "\nif __name__ == '__main__':\n    matmul_1(512, 512, 512)\n",
)


def _edit(rng: random.Random, text: str, history: list[str]) -> str:
    """One random edit of ``text``; some keep the syntax, many break it, a few undo."""
    if history and rng.random() < 0.08:
        return rng.choice(history)
    if rng.random() < 0.03:
        return text[1:] if text.startswith("\ufeff") else "\ufeff" + text
    lines = text.splitlines(keepends=True) or [""]
    kind = rng.randrange(7)
    at = rng.randrange(len(text) + 1)
    if kind == 0:
        return text[:at] + rng.choice(_SNIPPETS) + text[at:]
    if kind == 1:
        return text[:at] + text[at + rng.randrange(1, 30) :]
    if kind == 2:
        index = rng.randrange(len(lines))
        return "".join(lines[:index] + lines[index + 1 :])
    if kind == 3:
        index = rng.randrange(len(lines))
        return "".join([*lines[: index + 1], lines[index], *lines[index + 1 :]])
    if kind == 4:  # a number in a kernel body, the common keystroke
        digits = [i for i, c in enumerate(text) if c.isdigit()]
        if digits:
            at = rng.choice(digits)
            return text[:at] + str(rng.randrange(10)) + text[at + 1 :]
    if kind == 5:  # typing at the end of a line inside a kernel
        inside = [i for i, line in enumerate(lines) if line.startswith("            ")]
        if inside:
            index = rng.choice(inside)
            lines[index] = lines[index].rstrip("\r\n") + rng.choice([" ", "  # note", " + 1", ","]) + "\n"
            return "".join(lines)
    if kind == 6:  # rename a function
        defs = [i for i, line in enumerate(lines) if line.startswith("def ")]
        if defs:
            index = rng.choice(defs)
            lines[index] = lines[index].replace("(", "_v(", 1)
            return "".join(lines)
    return text[:at] + " " + text[at:]


@pytest.fixture(autouse=True)
def _steps_not_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budgets end on steps alone here: their clock depends on the machine's load, so one of two
    analyses of one text may run out of time where the other does not. What is compared is what
    the two compute, which the step budgets bound the same way."""
    from tilescope.core.static import evaluate, flow

    monkeypatch.setattr(flow, "RUN_SECONDS", 3600.0)
    monkeypatch.setattr(evaluate, "EXPRESSION_SECONDS", 3600.0)


def _fresh(text: str, path: str) -> StaticFile:
    forget_lexed()
    return analyze_source(text, path, blocks=BlockCache())


def _same(incremental: StaticFile, fresh: StaticFile) -> str | None:
    """Where the two analyses differ, or ``None``."""
    a, b = to_json(incremental), to_json(fresh)
    if a == b:
        return None
    for key in a:
        if a[key] != b[key]:
            left, right = a[key], b[key]
            if isinstance(left, list) and isinstance(right, list):
                for x, y in zip(left, right, strict=False):
                    if x != y:
                        return f"{key}: {json.dumps(x)[:600]}\n  !=\n{json.dumps(y)[:600]}"
                return f"{key}: {len(left)} != {len(right)} items"
            return f"{key}: {left!r} != {right!r}"
    return "differ"


def _check(text: str, path: str, edits: int, seed: int) -> int:
    """Apply ``edits`` random edits, comparing after each; how many analyses were patched."""
    rng = random.Random(seed)
    analysis = IncrementalAnalysis(path)
    history: list[str] = []
    patched = 0
    for step in range(edits + 1):
        if step:
            history.append(text)
            text = _edit(rng, text, history[-6:])
        got = analysis.analyze(text)
        patched += analysis.patched
        difference = _same(got, _fresh(text, path))
        assert difference is None, f"{path}, seed {seed}, edit {step}: {difference}"
    return patched


def _sample(count: int) -> list[Path]:
    files = valid_files()
    return random.Random(26).sample(files, min(count, len(files)))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")
@pytest.mark.parametrize("index", range(10))
def test_random_edits_to_corpus_files(index: int) -> None:
    files = _sample(10)
    if index >= len(files):
        pytest.skip("fewer corpus files")
    path = files[index]
    _check(path.read_text(), str(path), edits=30, seed=index)


ASCEND = Path(__file__).resolve().parents[1] / "lsp" / "fixtures" / "ascend_gemm_relu.py"


@pytest.mark.parametrize("seed", range(3))
def test_random_edits_to_an_ascend_kernel(seed: int) -> None:
    """The dialect's scopes, regions and checks are patched as a fresh analysis reads them."""
    _check(ASCEND.read_text(), str(ASCEND), edits=30, seed=seed)


@pytest.mark.parametrize(
    ("make", "seed"),
    [(lambda: many_kernels(40), 1), (lambda: many_kernels(40), 2), (lambda: many_lines(2000), 3)],
)
def test_random_edits_to_generated_large_files(make: Callable[[], str], seed: int) -> None:
    assert _check(make(), "/tmp/large.py", edits=30, seed=seed) > 0  # some edits took the patched path


def test_an_edit_inside_a_kernel_is_patched_not_reanalysed() -> None:
    text = many_kernels(60)
    analysis = IncrementalAnalysis("/tmp/large.py")
    analysis.analyze(text)
    lines = text.splitlines(keepends=True)
    middle = next(i for i in range(len(lines) // 2, len(lines)) if "T.clear(C_local)" in lines[i])
    for edit in (" ", "\n", "  # why"):
        lines[middle] = lines[middle].rstrip("\n") + edit + "\n"
        edited = "".join(lines)
        got = analysis.analyze(edited)
        assert analysis.patched
        assert _same(got, _fresh(edited, "/tmp/large.py")) is None
    lines[1] = "# a note below the docstring\n"  # the docstring's block changes, not what it says
    edited = "".join(lines)
    got = analysis.analyze(edited)
    assert analysis.patched
    assert _same(got, _fresh(edited, "/tmp/large.py")) is None
    lines[3] = "import tilelang.language as TL\n"  # the module's names change: every block is read again
    edited = "".join(lines)
    got = analysis.analyze(edited)
    assert not analysis.patched
    assert _same(got, _fresh(edited, "/tmp/large.py")) is None


def test_retyped_assignments_are_patched_changed_ones_reanalysed() -> None:
    text = many_lines(2000)
    analysis = IncrementalAnalysis("/tmp/large.py")
    analysis.analyze(text)
    lines = text.splitlines(keepends=True)
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("value_"))
    lines[middle] = lines[middle].rstrip("\n") + "  \n"  # the same assignment, retyped
    edited = "".join(lines)
    got = analysis.analyze(edited)
    assert analysis.patched
    assert _same(got, _fresh(edited, "/tmp/large.py")) is None
    lines[middle] = lines[middle].replace("* 2", "* 3")  # another value: the module's values change
    edited = "".join(lines)
    got = analysis.analyze(edited)
    assert not analysis.patched
    assert _same(got, _fresh(edited, "/tmp/large.py")) is None

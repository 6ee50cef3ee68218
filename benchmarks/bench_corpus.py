"""The static tier over TileLang's own examples (``../shared/corpus/tilelang-examples``).

Prints: files, kernels found (by style), diagnostics by severity and code (every warning listed
with its file and line), cold analysis and inlay-hint latency per file (p50/p95), the time to
re-hint a generated 1,000-line file after an edit at its top (p95), and what the block splitter
costs next to whole-file ``ast.parse``, ``tokenize`` and (when installed) parso. Run:

    python benchmarks/bench_corpus.py [--edits 50]      # TILESCOPE_CORPUS=DIR to point elsewhere
    python benchmarks/bench_corpus.py --compiler [ARGS]  # the compiler tier against plain TileLang
                                                        # (bench_corpus_compiler.py and its ARGS)

Goals (the static tier's acceptance): 0 error-severity and 0 syntax diagnostics; hints p95 ≤ 5 ms
per corpus file; the 1,000-line edit p95 ≤ 15 ms.
"""

from __future__ import annotations

import argparse
import ast
import collections
import io
import os
import statistics
import sys
import time
import tokenize
import warnings
from collections.abc import Callable
from pathlib import Path

from tilescope.core.ide.hints import inlay_hints
from tilescope.core.ide.merge import Facts
from tilescope.core.static import StaticFile, analyze_source
from tilescope.core.static.recover import clear_cache
from tilescope.core.static.split import forget_lexed, source_lines, split_blocks

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))
"""Beside the repository root; ``TILESCOPE_CORPUS`` points elsewhere (a worktree, say)."""
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp import generated_file  # noqa: E402


def corpus_files(root: Path = CORPUS) -> list[Path]:
    """Every file of the corpus that Python accepts (all 285 of them, upstream)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(path.read_text())
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        found.append(path)
    return found


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def row(label: str, samples: list[float]) -> str:
    return (
        f"{label:<46} p50 {statistics.median(samples) * 1000:7.2f} ms   "
        f"p95 {percentile(samples, 0.95) * 1000:7.2f} ms   (n={len(samples)})"
    )


def timed(run: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        began = time.perf_counter()
        run()
        samples.append(time.perf_counter() - began)
    return samples


def corpus_figures(files: list[Path]) -> dict[str, StaticFile]:
    analyses: dict[str, StaticFile] = {}
    cold: list[float] = []
    parse: list[float] = []
    hints: list[float] = []
    for path in files:
        text = path.read_text()
        began = time.perf_counter()
        ast.parse(text)
        parse.append(time.perf_counter() - began)
        began = time.perf_counter()
        static = analyze_source(text, str(path))
        cold.append(time.perf_counter() - began)
        analyses[str(path.relative_to(CORPUS))] = static
        facts = Facts(static)
        hints.extend(timed(lambda facts=facts: inlay_hints(facts), 5))
    styles = collections.Counter(k.ref.style for s in analyses.values() for k in s.kernels)
    kernels = sum(styles.values())
    print(f"files {len(files)}   kernels {kernels} ({', '.join(f'{n} {s}' for s, n in sorted(styles.items()))})")
    counts = collections.Counter((d.severity, d.code) for s in analyses.values() for d in s.diagnostics)
    with_errors = sum(1 for s in analyses.values() if any(d.severity == "error" for d in s.diagnostics))
    syntax = counts.get(("error", "syntax-error"), 0)
    print(f"files with an error diagnostic {with_errors}   syntax diagnostics {syntax}")
    for (severity, code), count in sorted(counts.items()):
        print(f"  {severity:<12} {code:<22} {count}")
    for name, static in analyses.items():
        for d in static.diagnostics:
            if d.severity in ("error", "warning"):
                print(f"  {d.severity}: {name}:{d.span.line} [{d.code}] {d.message}")
    print(row("whole-file ast.parse per file (reference)", parse))
    print(row("static analysis per file, cold", cold))
    print(row("inlay hints per file (analysis cached)", hints))
    return analyses


def edit_figures(count: int) -> None:
    """Edits at the top of 1,000 lines, re-analysed and re-hinted as the server does: typing on the
    first line (no block moves), and inserting lines (every block below moves, a new count each time)."""
    text = generated_file()
    lines = text.splitlines(keepends=True)
    analyze_source(text)
    typing_samples = []
    for run in range(count):
        edited = "".join([f"# edit {run}\n", *lines])
        began = time.perf_counter()
        inlay_hints(Facts(analyze_source(edited)))
        typing_samples.append(time.perf_counter() - began)
    print(row(f"re-hint after typing on line 1 ({len(lines)} lines)", typing_samples))
    inserting = []
    for run in range(count):
        edited = "".join(["\n" * (run + 2), *lines])
        began = time.perf_counter()
        inlay_hints(Facts(analyze_source(edited)))
        inserting.append(time.perf_counter() - began)
    print(row("re-hint after inserting lines at the top", inserting))
    clear_cache()
    print(row(f"cold analysis of the {len(lines)}-line file", timed(lambda: (clear_cache(), analyze_source(text)), 5)))


def parser_figures() -> None:
    """What cutting the file costs, next to the alternatives it was chosen over."""
    text = generated_file()
    lines = source_lines(text)
    print(row("whole-file ast.parse (1,000 lines)", timed(lambda: ast.parse(text), 20)))
    print(row("tokenize (1,000 lines)", timed(lambda: list(tokenize.generate_tokens(io.StringIO(text).readline)), 10)))
    print(row("split_blocks, cold (1,000 lines)", timed(lambda: (forget_lexed(), split_blocks(lines)), 20)))
    try:
        import parso  # type: ignore[import-not-found]
    except ImportError:
        print("parso not installed: skipped")
        return
    grammar = parso.load_grammar()
    print(row("parso (1,000 lines)", timed(lambda: grammar.parse(text, diff_cache=False), 5)))


def main() -> None:
    if "--compiler" in sys.argv[1:]:
        from bench_corpus_compiler import main as compiler_main

        compiler_main([a for a in sys.argv[1:] if a != "--compiler"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--compiler", action="store_true", help="the compiler tier: bench_corpus_compiler.py")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit(f"corpus not found at {CORPUS}")
    corpus_figures(corpus_files())
    edit_figures(args.edits)
    parser_figures()


if __name__ == "__main__":
    main()

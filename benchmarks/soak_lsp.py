"""Soak the language server: 10,000 random edits of the corpus files through a real client.

Every request is checked as in ``tests/lsp/test_fuzz.py`` (same fuzzer): answered without an
error, within 2 s, every position inside the document. Prints deaths, error responses, slow
answers, positions outside the document and latency percentiles. Run:

    python benchmarks/soak_lsp.py [--edits 10000] [--encoding utf-16|utf-8] [--seed 1] [--batch 12] [--expensive]

With ``--batch 12`` an answer's latency includes the work queued ahead of it (a fast typist's
editor); ``--batch 1`` waits for each edit's answers before the next edit.

Needs ``../shared/corpus/tilelang-examples`` beside the repository (the bundled examples otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.lsp.fuzzing import Fuzzer, noise  # noqa: E402

CORPUS = ROOT / ".." / "shared" / "corpus" / "tilelang-examples"
EDITOR = {"utf-16": "visual-studio-code", "utf-8": "neovim"}


async def soak(edits: int, encoding: str, seed: int, corpus: Path, batch: int, expensive: bool) -> int:
    paths = sorted(corpus.rglob("*.py")) if corpus.is_dir() else sorted((ROOT / "examples").glob("*.py"))
    sources = {path: path.read_text() for path in paths}
    client = LanguageClient()
    await client.start_io(str(Path(sys.executable).with_name("tilescope")), "lsp", "--stdio")
    result = await client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(EDITOR[encoding]), initialization_options={})
    )
    negotiated = result.capabilities.position_encoding
    fuzzer = Fuzzer(client, sources, encoding, seed, expensive=expensive)
    start = time.perf_counter()
    uri, text = await fuzzer.run(edits, batch=batch, reset_every=60)
    await noise(client)
    fuzzer.check_diagnostics(uri, text)
    elapsed = time.perf_counter() - start
    alive = client._server is not None and client._server.returncode is None  # type: ignore[attr-defined]
    report = fuzzer.report
    errors = [m for m in client.log_messages if m.type == types.MessageType.Error]
    await client.shutdown_session()
    latencies = sorted(report.latencies)
    p95 = latencies[round(0.95 * (len(latencies) - 1))]
    print(f"{len(sources)} files, {report.edits} edits, {report.requests} requests in {elapsed:.0f} s ({negotiated})")
    print(f"server deaths: {0 if alive else 1}")
    print(f"error responses: {len(report.errors)}; error log messages: {len(errors)}")
    print(f"answers over 2 s: {len(report.slow)}; over 1 s: {sum(1 for s in latencies if s > 1.0)}")
    print(f"positions outside the document: {len(report.outside)}")
    print(
        f"latency p50 {statistics.median(latencies) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms"
    )
    for problem in report.problems():
        print("  ", problem)
    return 0 if alive and not report.problems() and not errors else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--encoding", choices=sorted(EDITOR), default="utf-16")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--batch", type=int, default=12, help="requests in flight before waiting (1: each answer's own latency)"
    )
    parser.add_argument(
        "--expensive", action="store_true", help="one edit in five inserts valid, expensive Python (fuzzing.EXPENSIVE)"
    )
    args = parser.parse_args()
    return asyncio.run(soak(args.edits, args.encoding, args.seed, args.corpus, args.batch, args.expensive))


if __name__ == "__main__":
    sys.exit(main())

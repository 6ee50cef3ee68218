"""Large files through the running server: a 1 MB file of 1,104 kernels and a 100,000-line file.

For each: the time to the first inlay hints after opening it; keystroke latency (an edit inside a
kernel in the middle of the file, then inlay hints for the screen around it: the time from the
edit to the answer, p50/p95); and the latency of a hover on another file sent right after each
keystroke, while the large file is being analysed, against the same hover with no large file
open (what the analysis thread costs the event loop). Untrusted session (the static tier only). Run:

    python benchmarks/bench_large_files.py [--keystrokes 40]

Goals: keystroke p95 ≤ 100 ms on the 1 MB file; the hover on another file ≤ 50 ms.
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

from benchmarks.large_files import many_kernels, many_lines  # noqa: E402

GEMM = ROOT / "examples" / "gemm.py"


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered) * 1000:8.1f} ms   p95 {p95 * 1000:8.1f} ms   max {ordered[-1] * 1000:8.1f} ms"
    )


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def _open(client: LanguageClient, uri: str, text: str) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


def _screen(line: int) -> types.Range:
    return types.Range(
        start=types.Position(line=max(0, line - 40), character=0), end=types.Position(line=line + 40, character=0)
    )


async def _hover(client: LanguageClient, uri: str, where: types.Position) -> float:
    start = time.perf_counter()
    await client.text_document_hover_async(types.HoverParams(text_document=_doc(uri), position=where))
    return time.perf_counter() - start


async def measure(client: LanguageClient, name: str, text: str, keystrokes: int, other: str) -> None:
    uri = (Path("/tmp") / f"{name}.py").as_uri()
    lines = text.splitlines()
    marker = "value_" if "value_" in text else "T.clear(C_local)"
    target = next(i for i in range(len(lines) // 2, len(lines)) if marker in lines[i])
    column = len(lines[target])
    start = time.perf_counter()
    _open(client, uri, text)
    await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(uri), range=_screen(target)))
    first = time.perf_counter() - start
    where = types.Position(line=16, character=14)  # C_local in examples/gemm.py
    typing: list[float] = []
    hovers: list[float] = []
    for version in range(2, keystrokes + 2):
        at = types.Position(line=target, character=column + version - 2)
        change = types.TextDocumentContentChangePartial(range=types.Range(start=at, end=at), text=" ")
        start = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
        hovers.append(await _hover(client, other, where))
        await client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=_doc(uri), range=_screen(target))
        )
        typing.append(time.perf_counter() - start)
    print(f"{name}: {len(text) / 1e6:.2f} MB, {len(lines):,} lines; first hints {first:.2f} s")
    print(f"  keystroke to hints   {_ms(typing)}")
    print(f"  hover on another file {_ms(hovers)}")
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=_doc(uri)))


async def main(keystrokes: int) -> int:
    client = LanguageClient()
    await client.start_io(str(Path(sys.executable).with_name("tilescope")), "lsp", "--stdio")
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"), initialization_options={"workspaceTrust": False}
        )
    )
    other = GEMM.resolve().as_uri()
    _open(client, other, GEMM.read_text())
    await _hover(client, other, types.Position(line=16, character=14))
    alone = [await _hover(client, other, types.Position(line=16, character=14)) for _ in range(keystrokes)]
    print(f"hover on another file, no large file open {_ms(alone)}")
    await measure(client, "kernels_1mb", many_kernels(), keystrokes, other)
    await measure(client, "lines_100k", many_lines(), keystrokes, other)
    await client.shutdown_session()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--keystrokes", type=int, default=40)
    sys.exit(asyncio.run(main(parser.parse_args().keystrokes)))

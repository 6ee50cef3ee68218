"""Every static-tier feature end to end, through a real LSP client, in an untrusted workspace."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, FIXTURES, SERVER, open_file, replace_all, start, until, whole_file, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    """One untrusted session for the whole module: each test opens its own document."""
    await start(lsp_client, workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


GEMM = EXAMPLES / "gemm.py"


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def at(line: int, character: int) -> types.Position:
    """A 0-based LSP position."""
    return types.Position(line=line, character=character)


async def hints(client: LanguageClient, uri: str) -> list[tuple[int, int, str]]:
    found = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=whole_file()))
    )
    return [(h.position.line, h.position.character, h.label) for h in found]


async def test_inlay_hints_on_the_gemm_example(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    assert await hints(client, uri) == [
        (10, 34, "1024×1024 · float16"),
        (11, 34, "1024×1024 · float16"),
        (12, 34, "1024×1024 · float16"),
        (14, 93, "grid 8×8 · 128 threads · 48 KB shared"),
        (15, 64, "128×32 · float16 · shared.dyn"),
        (16, 64, "32×128 · float16 · shared.dyn"),
        (17, 71, "128×128 · float32 · local.fragment"),
    ]


async def test_inlay_hints_only_for_the_requested_range(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    visible = types.Range(start=at(15, 0), end=at(17, 0))
    found = await within(
        client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc(uri), range=visible))
    )
    assert [h.label for h in found] == ["128×32 · float16 · shared.dyn", "32×128 · float16 · shared.dyn"]


async def test_inlay_hints_on_the_eager_style_with_t_const(client: LanguageClient) -> None:
    uri = open_file(client, EXAMPLES / "flash_attention.py")
    found = await hints(client, uri)
    assert found[:5] == [
        (18, 52, "1×1024×8×64 · float16"),
        (19, 52, "1×1024×8×64 · float16"),
        (20, 52, "1×1024×8×64 · float16"),
        (21, 57, "1×1024×8×64 · float16"),
        (23, 90, "grid 16×8×1 · 128 threads · 40 KB shared"),
    ]
    assert (41, 80, "2 stages") in found


async def test_hints_survive_a_syntax_error_mid_file(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURES / "syntax_error_mid.py.txt")
    assert await hints(client, uri) == [
        (7, 43, "256×256 · float16"),
        (8, 62, "grid 4 · 128 threads · 32 KB shared"),
        (9, 60, "64×256 · float16 · shared.dyn"),
        (11, 61, "64×256 · float32 · local.fragment"),
        (19, 41, "512 · float32"),
        (20, 64, "grid 4 · 128 threads"),
        (21, 61, "128 · float32 · local.fragment"),
    ]
    await until(lambda: bool(client.diagnostics.get(uri)), what="diagnostics")
    (error,) = client.diagnostics[uri]
    assert error.range == types.Range(start=at(10, 18), end=at(10, 45))
    assert (error.message, error.code, error.source) == (
        "Syntax error: '(' was never closed",
        "syntax-error",
        "tilescope-static",
    )
    assert error.severity == types.DiagnosticSeverity.Error


async def test_diagnostics_for_a_wrong_shape_gemm(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURES / "wrong_gemm.py")
    await until(lambda: bool(client.diagnostics.get(uri)), what="diagnostics")
    found = [(d.range.start.line, d.code, d.severity, d.message) for d in client.diagnostics[uri]]
    assert found == [
        (
            17,
            "gemm-shape",
            types.DiagnosticSeverity.Error,
            "T.gemm K mismatch: A_shared gives K = 32, B_shared gives K = 128; B_shared is 128×32, "
            "so pass transpose_B=True or allocate it as 32×128",
        ),
    ]


async def test_diagnostics_follow_edits(client: LanguageClient) -> None:
    uri = open_file(client, FIXTURES / "wrong_gemm.py")
    await until(lambda: bool(client.diagnostics.get(uri)), what="diagnostics")
    fixed = (
        (FIXTURES / "wrong_gemm.py")
        .read_text()
        .replace("T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, transpose_B=True)")
    )
    replace_all(client, uri, fixed.replace('"float16")\n            T.clear', '"float32")\n            T.clear'), 2)
    await until(lambda: list(client.diagnostics.get(uri, [None])) == [], what="diagnostics to clear")


async def test_hover_on_a_buffer_lists_what_the_static_tier_knows(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    found = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(22, 35)))
    )
    assert found.range == types.Range(start=at(22, 33), end=at(22, 41))
    assert found.contents.value == "\n".join(
        [
            "```text",
            "B_shared: 32×128 float16 shared.dyn",
            "```",
            "- declared at line 17 with `T.alloc_shared` (static facts)",
            "- shape `(block_K, block_N)` with block_K=32 (default, line 8), block_N=128 (default, line 8)",
            "- 8 KB (8192 bytes), × 3 pipeline stages = 24 KB",
            "- written by T.copy (line 22)",
            "- read by T.gemm (line 23)",
        ]
    )


async def test_hover_on_a_primitive_shows_tilelang_docstring(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    found = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(22, 18)))
    )
    assert found.range == types.Range(start=at(22, 18), end=at(22, 22))
    text = found.contents.value
    assert text.startswith("```python\nT.gemm(A: BufferLikeType, B: BufferLikeType, C: BufferLikeType, transpose_A")
    assert "TileLang GEMM operator" in text


async def test_hover_on_nothing_in_particular_is_empty(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    found = await within(client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(0, 3))))
    assert found is None


async def test_completion_of_t_members_and_gemm_keywords(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    text = GEMM.read_text().replace("T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, tr")
    replace_all(client, uri, text, 2)
    members = await within(
        client.text_document_completion_async(types.CompletionParams(text_document=doc(uri), position=at(18, 14)))
    )
    labels = {item.label: item for item in members.items}
    assert {"alloc_shared", "alloc_fragment", "gemm", "Pipelined", "float16"} <= set(labels)
    assert (
        labels["alloc_fragment"].detail
        == "alloc_fragment(shape: ShapeType, dtype: DType, scope='local.fragment') -> Buffer"
    )
    keywords = await within(
        client.text_document_completion_async(types.CompletionParams(text_document=doc(uri), position=at(22, 54)))
    )
    assert all(item.sort_text for item in keywords.items)  # else an editor lists them alphabetically
    assert [item.label for item in sorted(keywords.items, key=lambda item: item.sort_text or "")] == [
        "A=",
        "B=",
        "C=",
        "transpose_A=",
        "transpose_B=",
        "policy=",
        "clear_accum=",
        "mbar=",
        "annotations=",
    ]


async def test_signature_help_marks_the_active_argument(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    text = GEMM.read_text().replace(
        "T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, transpose_B="
    )
    replace_all(client, uri, text, 2)
    found = await within(
        client.text_document_signature_help_async(
            types.SignatureHelpParams(text_document=doc(uri), position=at(22, 64))
        )
    )
    (signature,) = found.signatures
    assert signature.label.startswith("T.gemm(A: BufferLikeType")
    start, end = signature.parameters[found.active_parameter].label
    assert signature.label[start:end] == "transpose_B"


async def test_definition_and_references_of_a_buffer(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    where = await within(
        client.text_document_definition_async(types.DefinitionParams(text_document=doc(uri), position=at(22, 45)))
    )
    assert where == types.Location(uri=uri, range=types.Range(start=at(17, 12), end=at(17, 19)))
    found = await within(
        client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri), position=at(17, 14), context=types.ReferenceContext(include_declaration=True)
            )
        )
    )
    assert [(r.range.start.line, r.range.start.character) for r in found] == [(17, 12), (18, 20), (22, 43), (23, 19)]
    without = await within(
        client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri), position=at(17, 14), context=types.ReferenceContext(include_declaration=False)
            )
        )
    )
    assert len(without) == 3


async def test_document_symbols_are_kernels_with_their_buffers(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    (kernel,) = await within(
        client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(uri)))
    )
    assert (kernel.name, kernel.kind, kernel.detail) == ("matmul", types.SymbolKind.Function, "factory")
    assert kernel.selection_range == types.Range(start=at(7, 4), end=at(7, 10))
    assert [(c.name, c.detail) for c in kernel.children] == [
        ("A", "1024×1024 · float16 · global"),
        ("B", "1024×1024 · float16 · global"),
        ("C", "1024×1024 · float16 · global"),
        ("A_shared", "128×32 · float16 · shared.dyn"),
        ("B_shared", "32×128 · float16 · shared.dyn"),
        ("C_local", "128×128 · float32 · local.fragment"),
    ]


@pytest.mark.parametrize("name", ["softmax.py", "dequant_gemm.py", "elementwise_add.py"])
async def test_every_example_gets_hints_and_no_diagnostics(client: LanguageClient, name: str) -> None:
    uri = open_file(client, EXAMPLES / name)
    assert await hints(client, uri)
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    assert list(client.diagnostics[uri]) == []


ASCEND = FIXTURES / "ascend_gemm_relu.py"


async def test_an_ascend_kernel_shows_memory_levels_and_vector_regions(client: LanguageClient) -> None:
    uri = open_file(client, ASCEND)
    assert [label for _, _, label in await hints(client, uri)] == [
        "256×1024 · bfloat16 · GM",
        "512×1024 · bfloat16 · GM",
        "256×512 · float32 · GM",
        "grid 16 · L1 32 KB/512 KB · L0C 64 KB/256 KB · UB 32 KB/216 KB",
        "128×64 · bfloat16 · L1 · 16 KB",
        "128×64 · bfloat16 · L1 · 16 KB",
        "128×128 · float32 · L0C · 64 KB",
        "64×128 · float32 · UB · 32 KB",
        "SIMT · 64 threads",
    ]
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    assert list(client.diagnostics[uri]) == []
    buffer = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(14, 10)))
    )
    assert "A_l1: 128×64 bfloat16 L1 (shared.l1)" in buffer.contents.value
    assert "16 KB of L1's 512 KB (3%)" in buffer.contents.value


async def test_completion_hover_and_signatures_come_from_the_ascend_dialect(client: LanguageClient) -> None:
    uri = open_file(client, ASCEND)
    members = await within(
        client.text_document_completion_async(types.CompletionParams(text_document=doc(uri), position=at(14, 17)))
    )
    labels = {item.label: item for item in members.items}
    assert {"alloc_l1", "alloc_l0a", "alloc_l0c", "SimtVF", "SimdVF", "dual_copy", "Persistent"} <= set(labels)
    assert "alloc_tmem" not in labels  # CUDA's, which tilelang.ascend.language lacks
    assert (labels["alloc_l1"].sort_text or "") < (labels["ceil"].sort_text or "")
    primitive = await within(
        client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=at(14, 19)))
    )
    assert primitive.contents.value.startswith(
        "```python\nT.alloc_l1(shape: ShapeType, dtype: DType, scope='shared.l1')"
    )
    assert "*tilelang.ascend.language, TileLang" in primitive.contents.value
    text = ASCEND.read_text().replace("T.SimtVF(threads=64):", "T.SimtVF(threads=")
    replace_all(client, uri, text, 2)
    found = await within(
        client.text_document_signature_help_async(
            types.SignatureHelpParams(text_document=doc(uri), position=at(25, 29))
        )
    )
    (signature,) = found.signatures
    start, end = signature.parameters[found.active_parameter].label
    assert signature.label.startswith("T.SimtVF(threads: int") and signature.label[start:end] == "threads"
    plain = open_file(client, GEMM)
    members = await within(
        client.text_document_completion_async(types.CompletionParams(text_document=doc(plain), position=at(18, 14)))
    )
    assert "alloc_l1" not in {item.label for item in members.items}


async def test_the_simd_operations_complete_and_sign_as_members_of_t_simd(client: LanguageClient) -> None:
    uri = open_file(client, ASCEND)
    text = ASCEND.read_text().replace("C_ub[i, j] = T.max(C_ub[i, j], 0)", "x = T.simd.vadd(C_ub, ")
    replace_all(client, uri, text, 2)
    line = text.splitlines()[27]
    members = await within(
        client.text_document_completion_async(
            types.CompletionParams(text_document=doc(uri), position=at(27, line.index("simd.") + 5))
        )
    )
    labels = {item.label for item in members.items}
    assert {"vadd", "vld", "vdup", "vmax"} <= labels and "alloc_l1" not in labels
    found = await within(
        client.text_document_signature_help_async(
            types.SignatureHelpParams(text_document=doc(uri), position=at(27, len(line)))
        )
    )
    (signature,) = found.signatures
    start, end = signature.parameters[found.active_parameter].label
    assert signature.label.startswith("T.simd.vadd(src0, src1") and signature.label[start:end] == "src1"

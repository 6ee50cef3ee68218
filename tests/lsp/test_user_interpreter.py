"""The server's ``python`` setting: the compiler tier runs in the project's interpreter, one that
has TileLang (here 0.1.12, prepared by ``.ci/releases``) and not Tilescope."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, SERVER, execute, open_file, start, within

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
PYTHON = Path(__file__).resolve().parents[2] / ".venv-releases" / "0.1.12" / "bin" / "python"


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    if not PYTHON.exists():
        pytest.skip(f"{PYTHON} is absent: run .ci/releases")
    await start(lsp_client, workspaceTrust=True, timeout=120, python=str(PYTHON))
    yield
    await lsp_client.shutdown_session()


async def test_the_model_comes_from_the_projects_tilelang(client: LanguageClient) -> None:
    uri = open_file(client, EXAMPLES / "gemm.py")
    result = await within(execute(client, "tilescope.kernelModel", uri), timeout=180)
    (kernel,) = result["kernels"]
    assert kernel["diagnostics"] == []
    # TileLang 0.1.12 runs 70 passes on this GEMM (0.1.15, the server's own, 79).
    assert len(kernel["passes"]) == 70
    assert {b["name"]: b["line"] for b in kernel["buffers"]}["C_local"] == 18
    assert any(layout["buffer"] == "C_local" for layout in kernel["layouts"])

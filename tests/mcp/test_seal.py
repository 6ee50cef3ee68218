"""An agent's ``source`` through the real MCP server (the SDK's client over stdio) runs sealed as a learner's
file does: it writes nothing outside its worker's own folder (no dry run of its ``__main__`` either), reads
none of the server's secrets or ``/proc`` entries, and reaches no listener on loopback."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT, Listener, armed

SECRET_VARIABLE = "TILESCOPE_TEST_AGENT_SECRET"


@pytest.mark.slow
def test_an_agents_source_writes_reads_and_sends_nothing_outside_its_seal(tmp_path: Path, listener: Listener) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    outside, by_main = tmp_path / "outside.txt", tmp_path / "written-by-main.txt"
    source = armed({"secret": secret, "outside": str(outside), "port": listener.port}, tmp_path / "agent.py")
    text = source.read_text() + f'\n\nif __name__ == "__main__":\n    open({str(by_main)!r}, "w").write("ran")\n'
    text += "    kernel(256)\n"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tilescope", "mcp", "--root", str(ROOT)],
        cwd=str(ROOT),
        env={**os.environ, SECRET_VARIABLE: secret},
    )

    async def session() -> list[Any]:
        async with Client(server) as client:
            built = await client.call_tool("check", {"source": text, "args": {"N": 256}, "detail": "full"})
            sized_by_main = await client.call_tool("check", {"source": text, "detail": "full"})
            return [built, sized_by_main]

    answers = anyio.run(session)
    shown = " ".join(str(a.structured_content or a.content) for a in answers)
    assert "stolen" not in shown and secret not in shown, shown[:2000]
    assert answers[0].structured_content["summary"]["ok"], shown[:2000]  # it reached nothing, so it built
    assert not outside.exists() and not by_main.exists()
    assert listener.received == []

"""The compiler worker, which runs a file's own code (the editor's trusted mode, the MCP server, the CPU
grader), holds none of its caller's secrets: not the caller's environment, nor its ``/proc`` entries, nor
Ray's token, nor a network; sealed (an agent's source text), it writes nothing outside its own folder."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import to_json
from tilescope.core.sandbox import landlock

from tests.conftest import Listener, armed

pytestmark = pytest.mark.skipif(landlock.abi() < 4, reason="this kernel offers no Landlock with network rules")


@pytest.mark.parametrize("sealed", [False, True], ids=["trusted", "sealed"])
def test_a_compiler_worker_reaches_no_secret_and_no_network(
    tmp_path: Path, listener: Listener, monkeypatch: pytest.MonkeyPatch, sealed: bool
) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv("TILESCOPE_TEST_CALLER_SECRET", secret)
    token = tmp_path / "home" / ".ray" / "auth_token"
    token.parent.mkdir(parents=True)
    token.write_text(secret)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    target: dict[str, object] = {"secret": secret, "server_pid": os.getpid(), "files": [str(token)]}
    target["port"] = listener.port
    if sealed:
        target["outside"] = str(tmp_path / "outside.txt")
    (tmp_path / "work").mkdir()
    file = armed(target, tmp_path / "work" / "kernel.py")
    with Analyzer(timeout_s=120, sealed=sealed) as analyzer:
        result = analyzer.analyze(str(file), kernel="kernel", args={"N": 256}, hazards_s=0)
    shown = json.dumps(to_json(result))
    assert "stolen" not in shown and secret not in shown, shown[:2000]
    assert result.ok and result.kernels, shown[:2000]
    assert listener.received == []
    assert not (tmp_path / "outside.txt").exists()

"""The three subcommands, run as a user runs them, through the ``tilescope`` dispatcher."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tilescope.core.cli.main import main
from tilescope.core.ide.layout_view import choose
from tilescope.core.model import to_json

GEMM = str(Path(__file__).resolve().parents[2] / "examples" / "gemm.py")


@pytest.mark.slow
def test_layout_all_writes_one_image_per_buffer_and_draws_in_the_terminal(tmp_path, capsys):
    assert main(["layout", GEMM, "--all", "--term", "-o", str(tmp_path / "g.png")]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["g-A_shared.png", "g-B_shared.png", "g-C_local.png"]
    out = capsys.readouterr().out
    assert "C_local: 128×128 float32 fragment" in out and "ldmatrix" in out


@pytest.mark.slow
def test_layout_names_the_buffers_when_the_one_asked_for_has_no_layout(capsys):
    assert main(["layout", GEMM, "--buffer", "nope"]) == 2
    assert "(layouts: C_local, A_shared, B_shared)" in capsys.readouterr().err


@pytest.mark.slow
def test_layout_json_is_the_core_view_editors_receive(gemm, capsys):
    assert main(["layout", GEMM, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == to_json(choose(gemm))


@pytest.mark.slow
def test_graph_and_trace_exports(tmp_path):
    assert main(["graph", GEMM, "-o", str(tmp_path / "g.dot")]) == 0
    assert "cluster_pipeline_0" in (tmp_path / "g.dot").read_text()
    assert main(["trace", GEMM, "--export", "patch", "-o", str(tmp_path / "t.patch")]) == 0
    assert re.search(r"^# pass \d+: tl\.LayoutInference", (tmp_path / "t.patch").read_text(), re.MULTILINE)

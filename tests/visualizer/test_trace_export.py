"""Exported traces: a patch series that replays the pipeline, and a compact HTML page."""

from __future__ import annotations

import re
import subprocess

import pytest
from tilescope.visualizer.trace_export import to_html, to_patch
from tilescope.visualizer.trace_session import TraceSession


@pytest.fixture(scope="module")
def session(analyzer, gemm_analysis, gemm) -> TraceSession:
    return TraceSession(analyzer, gemm_analysis.path, gemm)


def test_patch_series_replays_the_ir_from_first_to_last_pass(session, tmp_path):
    text = to_patch(session)
    changed = [p for p in session.passes if p.changed and session.diff(p.index).changed]
    assert text.count("\n+++ ") + text.startswith("+++ ") == len(changed)
    # apply every diff in order to the IR before the first pass: the result is the last IR
    work = tmp_path / "ir.tir"
    work.write_text(session.ir(-1).text if session.ir(-1).text.endswith("\n") else session.ir(-1).text + "\n")
    for chunk in re.split(r"^# pass .*$", text, flags=re.MULTILINE)[1:]:
        body = re.sub(r"^(---|\+\+\+) .*$", lambda m: f"{m.group(1)} ir.tir", chunk.strip("\n"), flags=re.MULTILINE)
        done = subprocess.run(
            ["patch", "-p0", "-s", "--no-backup-if-mismatch"], input=(body + "\n").encode(), cwd=tmp_path
        )
        assert done.returncode == 0
    assert work.read_text().rstrip("\n") == session.ir(len(session.passes) - 1).text.rstrip("\n")


def test_html_lists_every_pass_and_details_only_changes(session):
    page = to_html(session)
    assert page.count('<a href="#p') == len(session.passes)
    changed = sum(1 for p in session.passes if session.diff(p.index).changed)
    assert page.count('<section id="p') == changed
    assert "Look for:" in page and "Generated CUDA" in page
    assert len(page.encode()) < 1024 * 1024

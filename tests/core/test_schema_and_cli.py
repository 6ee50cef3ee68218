"""The JSON contract: documented field by field, round-trips, and the CLI's exit status and summary."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

from tilescope.core import model
from tilescope.core.ide import Diff, KernelLayout, LayoutView, Panel, PassDiff, PassView, Row, TraceView
from tilescope.core.ide.layout_view import Conflict, Fact, LegendEntry
from tilescope.core.model import SCHEMA_VERSION, FileAnalysis, dumps, from_json
from tilescope.lsp.commands import CudaSource

from tests.conftest import EXAMPLES, ROOT

FIXTURES = Path(__file__).parent / "fixtures"
RECORDS = [
    model.FileAnalysis,
    model.KernelRef,
    model.Param,
    model.KernelModel,
    model.Buffer,
    model.Layout,
    model.Launch,
    model.ThreadRange,
    model.Pipeline,
    model.PassRecord,
    model.Access,
    model.Autotune,
    model.TuneConfig,
    model.VariantsReport,
    model.Variant,
    model.VariantDiff,
    model.Change,
    model.Resources,
    model.Diagnostic,
    model.Span,
    model.IRText,
    model.RunReport,
    model.OutputStats,
    model.Finding,
    model.Comparison,
    KernelLayout,
    LayoutView,
    Panel,
    LegendEntry,
    Conflict,
    Fact,
    TraceView,
    PassView,
    PassDiff,
    Diff,
    Row,
    CudaSource,
]


def test_schema_document_covers_every_field() -> None:
    text = (ROOT / "tilelang_core" / "SCHEMA.md").read_text()
    assert f"schema version {SCHEMA_VERSION}" in text
    rows = re.findall(r"^\| `schema_version` \| int \| (\d+) \|", text, re.M)
    assert rows and all(int(row) == SCHEMA_VERSION for row in rows), rows
    versions = re.search(r"^## Versions\n(.*?)(?=^## )", text, re.S | re.M)
    assert versions, "SCHEMA.md lists what each version changed"
    listed = [int(v) for v in re.findall(r"^- (\d+): ", versions.group(1), re.M)]
    assert listed == list(range(SCHEMA_VERSION, 0, -1)), listed
    for record in RECORDS:
        section = re.search(rf"^## {record.__name__}\b(.*?)(?=^## |\Z)", text, re.S | re.M)
        assert section, record.__name__
        documented = set(re.findall(r"^\| `(\w+)` \|", section.group(1), re.M))
        assert documented == {f.name for f in dataclasses.fields(record)}, record.__name__


def _tilescope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_check_json_round_trips_into_the_typed_model() -> None:
    done = _tilescope("check", str(EXAMPLES / "gemm.py"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["tilelang_version"] and report["tier"] == "compiler"
    (data,) = report["files"]
    analysis = from_json(FileAnalysis, data)
    assert json.loads(dumps(analysis)) == data
    kernel = analysis.kernel("matmul")
    assert kernel is not None and kernel.layout("C_local").elements_per_thread == 128
    assert done.stderr.strip().startswith("tilescope check ok: 1/1 kernels lowered for sm_90")


def test_check_reports_bad_input_in_one_line_and_fails() -> None:
    for fixture, code in [
        ("syntax_error.py", "syntax-error"),
        ("no_kernels.py", "no-kernels"),
        ("raises.py", "build-error"),
    ]:
        done = _tilescope("check", str(FIXTURES / fixture))
        assert done.returncode == 1, fixture
        summary = done.stdout.strip().splitlines()[-1]
        assert summary.startswith("tilescope check FAILED"), summary
        assert f"[{code}]" in done.stdout


def test_check_overrides_arguments_and_reports_them() -> None:
    done = _tilescope("check", str(EXAMPLES / "gemm.py"), "--arg", "K=256", "--arg", "block_K=64")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kernel matmul(M=1024, N=1024, K=256, block_M=128, block_N=128, block_K=64" in done.stdout
    assert "A_shared  128×64" in done.stdout

"""``tilescope check DIR -j N``: recursive, parallel, summarised, with JSON and SARIF 2.1.0 output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.compiler.batch import python_files

from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    (root / "ops" / "deep").mkdir(parents=True)
    (root / ".hidden").mkdir()
    shutil.copy(EXAMPLES / "elementwise_add.py", root / "ops" / "add.py")
    shutil.copy(FIXTURES / "raises.py", root / "ops" / "deep" / "raises.py")
    shutil.copy(EXAMPLES / "elementwise_add.py", root / ".hidden" / "skipped.py")
    (root / "helpers.py").write_text("def unrelated():\n    return 1\n")
    return root


def _check(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", "check", ".", "-j", "2", *args],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_folders_are_searched_recursively_for_tilelang_files(tree: Path) -> None:
    assert [p.relative_to(tree).as_posix() for p in python_files([str(tree)])] == ["ops/add.py", "ops/deep/raises.py"]


def test_json_has_every_file_and_the_exit_status_reports_errors(tree: Path) -> None:
    done = _check(tree, "--format", "json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    files = {Path(f["path"]).name: f for f in data["files"]}
    assert set(files) == {"add.py", "raises.py"}
    assert files["add.py"]["kernels"][0]["passes"] and not files["add.py"]["kernels"][0]["diagnostics"]
    assert files["raises.py"]["kernels"][0]["diagnostics"][0]["code"] == "build-error"
    assert "2/2 kernels" not in done.stderr and "1/2 kernels lowered in 2 files, 1 errors" in done.stderr


def test_text_output_is_a_summary_table(tree: Path) -> None:
    done = _check(tree)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("tilescope check: TileLang 0.1.") and lines[0].endswith(", target sm_90")
    assert "ops/deep/raises.py:7: error[build-error]" in lines[1]
    header = lines.index(next(line for line in lines if line.startswith("folder")))
    rows = [line.split() for line in lines[header + 1 : header + 4]]
    assert rows == [
        ["ops", "1", "1", "1", "0", "0"],
        ["ops/deep", "1", "1", "0", "1", "0"],
        ["total", "2", "2", "1", "1", "0"],
    ]
    assert lines[-1].startswith("tilescope check FAILED")


def test_sarif_is_a_2_1_0_log_with_relative_locations(tree: Path) -> None:
    done = _check(tree, "--format", "sarif")
    log = json.loads(done.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "tilescope"
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["build-error"]
    (result,) = run["results"]
    assert result["ruleId"] == "build-error" and result["level"] == "error" and result["message"]["text"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "ops/deep/raises.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"]["startLine"] == 7 and location["region"]["startColumn"] >= 1
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"

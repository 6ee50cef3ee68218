"""``check --format sarif`` is a SARIF 2.1.0 log valid against the OASIS schema (``tests/sarif``),
with a described rule per code, the tool's and TileLang's versions, and regions that never invert."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from tilescope.core.cli.sarif import region
from tilescope.core.compat import releases
from tilescope.core.model import Span

from tests.cli.helpers import CORPUS, EXAMPLES, tilescope

SCHEMA = json.loads((Path(__file__).parents[1] / "sarif" / "sarif-schema-2.1.0.json").read_text())
FIXTURES = Path(__file__).parents[1] / "core" / "fixtures"


def validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(log)


def regions(log: dict) -> list[dict]:
    return [loc["physicalLocation"]["region"] for r in log["runs"][0]["results"] for loc in r["locations"]]


def test_the_schema_rejects_what_it_should() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})  # a driver needs a name


def test_regions_never_end_before_they_start() -> None:
    assert region(Span(3, 10, 3, 0)) == {"startLine": 3, "startColumn": 11, "endLine": 3}  # to the end of line 3
    assert region(Span(5, 2, 4, 9)) == {"startLine": 5, "startColumn": 3}
    assert region(Span(3, 10, 3, 14)) == {"startLine": 3, "startColumn": 11, "endLine": 3, "endColumn": 15}
    assert region(Span(3, 10, 4, 0)) == {"startLine": 3, "startColumn": 11, "endLine": 4, "endColumn": 1}


def test_compiler_findings_are_a_valid_log_with_rules_and_versions() -> None:
    files = [FIXTURES / name for name in ("raises.py", "syntax_error.py", "no_kernels.py", "needs_args.py")]
    done = tilescope("check", *map(str, files), str(EXAMPLES / "gemm.py"), "--format", "sarif", cwd=FIXTURES)
    assert done.returncode == 1, done.stderr
    log = json.loads(done.stdout)
    validate(log)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "tilescope" and driver["version"]
    assert run["tool"]["extensions"] == [{"name": "tilelang", "version": releases.installed_version()}]
    rules = {rule["id"]: rule for rule in driver["rules"]}
    assert {"build-error", "syntax-error", "no-kernels"} <= rules.keys()
    for rule in rules.values():
        assert rule["shortDescription"]["text"] and rule["help"]["text"] and rule["fullDescription"]["text"]
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]} >= {
        "raises.py",
        "syntax_error.py",
    }


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")
def test_the_log_of_the_whole_corpus_validates() -> None:
    done = tilescope("check", "--static", str(CORPUS), "--format", "sarif", "--target", "sm_90", cwd=CORPUS)
    log = json.loads(done.stdout)
    validate(log)
    assert log["runs"][0]["results"], "the corpus gives at least its warnings"
    for found in regions(log):
        if found.get("endLine") == found["startLine"] and "endColumn" in found:
            assert found["endColumn"] > found["startColumn"]

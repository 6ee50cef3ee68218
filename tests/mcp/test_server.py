"""The MCP server through the official SDK's own client, over stdio (HTTP: ``test_http.py``).

Each tool's complete answer on the bundled GEMM equals what the matching CLI command prints; hostile
input (an endless loop, a 60 GB appetite, ``os._exit``, a path outside the root, a 10 MB source) is
answered with an error result and the server goes on answering.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from tilescope.core.ide.trace_view import trace_view
from tilescope.core.model import FileAnalysis, from_json, to_json, untimed

from tests.conftest import starved

ROOT = Path(__file__).resolve().parents[2]
GEMM = "examples/gemm.py"
FIXTURES = "tests/core/fixtures"
TOOLS = {"check", "layout", "passes", "pass_diff", "variants", "run", "profile", "explain", "puzzles_check"}


def _tilescope(*args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def _server(*extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """The server as an MCP client starts it; ``env`` is added to the few variables the SDK passes on."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tilescope", "mcp", "--root", str(ROOT), *extra],
        cwd=str(ROOT),
        env=env,
    )


def _call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    return client.call_tool(name, arguments)


TOOL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("check", {"path": GEMM, "detail": "full", "max_chars": 2_000_000}),
    ("check", {"path": GEMM}),
    ("layout", {"path": GEMM, "buffer": "C_local", "detail": "full", "max_chars": 2_000_000}),
    ("passes", {"path": GEMM, "detail": "full", "max_chars": 2_000_000}),
    ("pass_diff", {"path": GEMM, "index": 3, "detail": "full", "max_chars": 2_000_000}),
    ("variants", {"path": GEMM, "targets": ["sm_80"], "detail": "full", "max_chars": 2_000_000}),
    ("run", {"path": "examples/elementwise_add.py", "args": {"N": 4096}, "detail": "full"}),
    ("profile", {"path": GEMM, "detail": "full", "max_chars": 2_000_000}),
    ("explain", {"code": "gemm-shape"}),
]
PUZZLE = next((ROOT / "puzzles" / "content").glob("01_*"))
PUZZLE_FILES = {"solution": PUZZLE / "solution.py", "starter": PUZZLE / "starter.py"}
STATE_HOSTILE = ["patches_json.py", "patches_tilelang.py", "installs_import_hook.py", "patches_tilescope.py"]


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One server with the default options, started once for the module (each start is a compiler worker's):
    every tool called once, the puzzles' verdicts, then (last, so nothing they leave can touch the others)
    the kernels that patch shared state, each followed by a clean file. The tests below assert on their part."""
    data = tmp_path_factory.mktemp("data")
    clean = (ROOT / FIXTURES / "module_prim_func.py").read_text()

    async def session() -> dict[str, Any]:
        async with Client(_server(env={"TILESCOPE_DATA_DIR": str(data)})) as client:
            answers: dict[str, Any] = {"tools": (await client.list_tools()).tools}
            for name, arguments in TOOL_CALLS:
                answers.setdefault(name, []).append(await _call(client, name, arguments))
            resources = await client.list_resources()
            answers["catalog"] = await client.read_resource(resources.resources[0].uri)
            answers["puzzles_check"] = {
                label: await _call(client, "puzzles_check", {"puzzle": "01", "path": str(path), "cpu": True})
                for label, path in PUZZLE_FILES.items()
            }
            answers["after_hostile"] = []
            for name in STATE_HOSTILE:
                await _call(client, "check", {"path": f"{FIXTURES}/hostile/{name}"})
                answers["after_hostile"].append(await _call(client, "check", {"source": clean + f"# after {name}\n"}))
            return answers

    return anyio.run(session)


@pytest.mark.slow
def test_every_tool_answers_as_the_cli_does_over_stdio(stdio: dict[str, Any]) -> None:
    got = stdio
    assert {t.name for t in got["tools"]} == TOOLS
    for tool in got["tools"]:
        assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object", tool.name
        assert tool.description and tool.input_schema["properties"], tool.name

    full, brief = got["check"]
    assert not full.is_error and not brief.is_error
    cli = _tilescope("check", GEMM, "--json")
    cli_file = cli["files"][0] if "files" in cli else cli
    assert untimed(full.structured_content["full"]) == untimed(cli_file)
    summary = brief.structured_content["summary"]
    assert summary["path"] == GEMM and summary["ok"] and summary["kernels"][0]["kernel"] == "matmul"
    assert len(json.dumps(brief.structured_content)) < len(json.dumps(full.structured_content)) / 5

    (layout,) = got["layout"]
    assert layout.structured_content["layout"] == _tilescope("layout", GEMM, "--buffer", "C_local", "--json")

    (passes,) = got["passes"]
    model = from_json(FileAnalysis, cli_file).kernels[0]
    assert untimed(passes.structured_content["trace"]) == untimed(to_json(trace_view(model)))

    (diff,) = got["pass_diff"]
    rows = diff.structured_content["diff"]["diff"]["rows"]
    assert diff.structured_content["diff"]["index"] == 3 and isinstance(rows, list)

    (variants,) = got["variants"]
    cli_variants = _tilescope("variants", GEMM, "--targets", "sm_80", "--json", "-j", "1")
    assert untimed(variants.structured_content["full"]) == untimed(cli_variants)

    (run,) = got["run"]
    cli_run = _tilescope("run", "examples/elementwise_add.py", "--arg", "N=4096", "--json")
    assert untimed(run.structured_content["report"]) == untimed(cli_run)

    (profile,) = got["profile"]
    cli_profile = _tilescope("profile", GEMM, "--json")
    assert profile.structured_content["report"]["path"] == GEMM
    assert untimed({**profile.structured_content["report"], "path": ""}) == untimed({**cli_profile, "path": ""})

    (explain,) = got["explain"]
    assert [explain.structured_content["code"]] == _tilescope("explain", "gemm-shape", "--json")

    catalog = json.loads(got["catalog"].contents[0].text)
    assert "gemm" in catalog["names"] and catalog["tilelang_version"]


@pytest.mark.slow
def test_puzzles_check_gives_the_graders_verdict(
    stdio: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TILESCOPE_DATA_DIR", str(tmp_path / "data"))
    got = stdio["puzzles_check"]
    for label, path in PUZZLE_FILES.items():
        cli = _tilescope("puzzles", "check", "01", str(path), "--cpu", "--json")
        report = got[label].structured_content["report"]
        assert report["passed"] == cli["passed"] == (label == "solution"), label
        assert got[label].is_error == (label != "solution")
        fixed = [c["name"] for c in cli["cases"] if not c["name"].startswith("hidden")]
        assert [c["name"] for c in report["cases"]][: len(fixed)] == fixed


@pytest.mark.slow
def test_hostile_input_gets_an_error_result_and_the_server_lives_on() -> None:
    hostile = [
        ("loop", {"path": f"{FIXTURES}/hangs.py"}),
        ("greedy", {"path": f"{FIXTURES}/greedy.py"}),
        ("exit", {"path": f"{FIXTURES}/exits.py"}),
        ("outside", {"path": "../../etc/passwd"}),
        ("absolute", {"path": "/etc/passwd"}),
        ("huge", {"source": "x = 1\n" * ((10 << 20) // 6)}),
        ("both", {"path": GEMM, "source": "x = 1"}),
        ("bad-detail", {"path": GEMM, "detail": "everything"}),
    ]

    async def session() -> dict[str, Any]:
        answers: dict[str, Any] = {}
        async with Client(_server("--timeout", "8", "--memory", "2048")) as client:
            for label, arguments in hostile:
                started = time.monotonic()
                answers[label] = (await _call(client, "check", arguments), time.monotonic() - started)
            answers["after"] = (await _call(client, "check", {"path": GEMM}), 0.0)
            answers["unknown"] = (await _call(client, "no_such_tool", {}), 0.0)
        return answers

    got = anyio.run(session)
    for label, _ in hostile:
        result, took = got[label]
        assert result.is_error, label
        assert result.content[0].text, label
        assert took < 60, (label, took)
    assert "outside the workspace" in got["outside"][0].content[0].text
    assert "at most" in got["huge"][0].content[0].text
    after, _ = got["after"]
    assert not after.is_error and after.structured_content["summary"]["kernels"][0]["kernel"] == "matmul"
    assert got["unknown"][0].is_error


@pytest.mark.slow
def test_state_a_kernel_leaves_never_reaches_the_next_check(stdio: dict[str, Any]) -> None:
    """Kernels that patch ``json.dumps``, TileLang, the import system or a Tilescope global, each followed
    by a clean file on the same server: the clean file's check names its own kernel with its own launch."""
    for name, answer in zip(STATE_HOSTILE, stdio["after_hostile"], strict=True):
        assert not answer.is_error, (name, answer.content[0].text)
        (kernel,) = answer.structured_content["summary"]["kernels"]
        assert kernel["kernel"] == "double" and kernel["launch"]["threads"] == 128, (name, kernel)
        assert "FORGED" not in json.dumps(answer.structured_content), name


@pytest.mark.slow
@pytest.mark.parametrize("share", [1.0, 1 / 3], ids=["quiet", "a-third-of-a-cpu"])
def test_check_of_a_module_that_never_loads_answers_within_its_timeout(share: float) -> None:
    """``--timeout 20`` is the user's wall clock, the worker's start included: the answer comes within 30 s
    of the call, also with the server's processes given a third of one CPU (a CPU-time limit would never end
    the module's wait)."""

    async def session() -> tuple[Any, float]:
        async with Client(_server("--timeout", "20")) as client:
            started = time.monotonic()
            answer = await _call(client, "check", {"path": f"{FIXTURES}/top_level_forever.py"})
            return answer, time.monotonic() - started

    with starved(share):
        answer, took = anyio.run(session)
    assert took < 30, took
    (kernel,) = answer.structured_content["summary"]["kernels"]
    assert [d["code"] for d in kernel["diagnostics"]] == ["timeout"], kernel

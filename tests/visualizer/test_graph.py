"""The dataflow graph's structure, and rendering with and without Graphviz."""

from __future__ import annotations

import re
import shutil

import pytest
from tilescope.visualizer.dataflow import build_graph
from tilescope.visualizer.graph_cmd import write


def _edges(source: str) -> list[tuple[str, str, str]]:
    return re.findall(r"^\s*(\w+) -> (\w+)(.*)$", source, flags=re.MULTILINE)


def test_gemm_graph_has_every_tile_buffer_and_operation(gemm):
    source = build_graph(gemm).source
    for name in ("A", "B", "C", "A_shared", "B_shared", "C_local"):
        assert f"buf_{name} [" in source
    assert "128×32 float16" in source and "× 3 stages" in source
    assert "num_stages=3" in source and "subgraph cluster_pipeline_0" in source
    edges = {(a, b) for a, b, _ in _edges(source)}
    op = {label: f"op_{i}" for i, label in enumerate(["fill", "copyA", "copyB", "gemm", "copyC"])}
    assert ("buf_A", op["copyA"]) in edges and (op["copyA"], "buf_A_shared") in edges
    assert ("buf_A_shared", op["gemm"]) in edges and ("buf_B_shared", op["gemm"]) in edges
    assert ("buf_C_local", op["copyC"]) in edges and (op["copyC"], "buf_C") in edges


def test_accumulation_is_one_two_headed_edge(gemm):
    source = build_graph(gemm).source
    gemm_edges = [(a, b, rest) for a, b, rest in _edges(source) if "buf_C_local" in (a, b) and a == "op_3"]
    assert len(gemm_edges) == 1 and "dir=both" in gemm_edges[0][2]
    assert not any(a == "buf_C_local" and b == "op_3" for a, b, _ in _edges(source))


def test_pipelined_operations_sit_inside_the_pipeline_cluster(gemm):
    source = build_graph(gemm).source
    cluster = source[source.index("subgraph cluster_pipeline_0") :]
    cluster = cluster[: cluster.index("}")]
    assert "T.gemm" in cluster and cluster.count("T.copy") == 2
    assert "line 24" not in cluster


def test_without_dot_the_source_is_written_with_instructions(gemm, tmp_path):
    ok, message = write(build_graph(gemm), tmp_path / "g.svg", None)
    assert not ok
    assert (tmp_path / "g.dot").read_text().startswith("digraph")
    assert "apt-get install graphviz" in message and "dot -Tsvg" in message


def test_dot_suffix_writes_source(gemm, tmp_path):
    ok, _ = write(build_graph(gemm), tmp_path / "g.dot", None)
    assert ok and "buf_C_local" in (tmp_path / "g.dot").read_text()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_dot_renders_svg(gemm, tmp_path):
    ok, _ = write(build_graph(gemm), tmp_path / "g.svg", shutil.which("dot"))
    svg = (tmp_path / "g.svg").read_text()
    assert ok and "<svg" in svg and "C_local" in svg

"""The tile dataflow of a kernel as a Graphviz graph: buffers as nodes, tile operations between them.

Built from the model's buffers, accesses and pipelines only. An operation that updates a buffer in
place (``acc_o *= scale``, ``T.gemm`` accumulating into ``C_local``) is drawn as one two-headed
edge, so accumulators do not turn the picture into a knot of back edges.
"""

from __future__ import annotations

import graphviz
from tilescope.core.display import kib
from tilescope.core.ide import buffer_stages, dims_text, stages_text
from tilescope.core.model import Access, Buffer, KernelModel

_SCOPE_STYLE = {
    "global": {"shape": "cylinder", "fillcolor": "#e8e8e8"},
    "shared": {"shape": "box3d", "fillcolor": "#cfe3f7"},
    "local.fragment": {"shape": "box", "style": "rounded,filled", "fillcolor": "#d7efd2"},
}
_OP_COLOUR = {
    "copy": "#f4b183",
    "gemm": "#c9a0dc",
    "fill": "#fff2a8",
    "parallel": "#ffd8a8",
}
_OP_TEXT = {"parallel": "T.Parallel", "fill": "T.fill / T.clear"}


def _scope_style(scope: str) -> dict[str, str]:
    key = "shared" if scope.startswith("shared") else scope
    return {"style": "filled", **_SCOPE_STYLE.get(key, {"shape": "box", "fillcolor": "white"})}


def _buffer_label(kernel: KernelModel, buffer: Buffer) -> str:
    stages = buffer_stages(kernel, buffer)
    staged = f"\n× {stages_text(stages)}" if stages else ""
    return f"{buffer.name}\n{dims_text(buffer.shape)} {buffer.dtype}\n{buffer.scope}{staged}"


def _op_label(access: Access) -> str:
    name = _OP_TEXT.get(access.op, f"T.{access.op}")
    return f"{name}\nline {access.line}" if access.line else name


def _title(kernel: KernelModel) -> str:
    parts = [kernel.kernel]
    if kernel.launch:
        threads = f"{kernel.launch.threads} threads"
        if kernel.launch.threads_after_ws != kernel.launch.threads:
            threads += f" ({kernel.launch.threads_after_ws} after warp specialisation)"
        parts.append(f"grid {dims_text(kernel.launch.grid_dims())}, {threads}")
    if kernel.shared_bytes:
        parts.append(f"{kib(kernel.shared_bytes)} shared")
    return " · ".join(parts)


def build_graph(kernel: KernelModel) -> graphviz.Digraph:
    """The dataflow graph of ``kernel``; render it with ``.pipe()`` or read its ``.source``."""
    graph = graphviz.Digraph(kernel.kernel, graph_attr={"rankdir": "LR", "label": _title(kernel), "labelloc": "t"})
    graph.attr("node", fontname="Helvetica", fontsize="10")
    graph.attr("edge", color="#555555", arrowsize="0.7")
    used = {name for a in kernel.accesses for name in (*a.reads, *a.writes)}
    for buffer in kernel.buffers:
        if buffer.name in used:
            graph.node(f"buf_{buffer.name}", _buffer_label(kernel, buffer), **_scope_style(buffer.scope))
    ordered = sorted(kernel.accesses, key=lambda a: (a.line is None, a.line or 0))
    pipelines = sorted(kernel.pipelines, key=lambda p: p.line or 0)
    clusters: dict[int, graphviz.Digraph] = {}
    for index, access in enumerate(ordered):
        node = f"op_{index}"
        target = graph
        if access.pipelined and pipelines:
            owner = max((i for i, p in enumerate(pipelines) if (p.line or 0) <= (access.line or 0)), default=0)
            if owner not in clusters:
                p = pipelines[owner]
                clusters[owner] = graphviz.Digraph(
                    f"cluster_pipeline_{owner}",
                    graph_attr={
                        "label": f"for {p.loop_var} in T.Pipelined(..., num_stages={p.num_stages})"
                        + (f"  line {p.line}" if p.line else ""),
                        "style": "dashed,rounded",
                        "color": "#7a5195",
                    },
                )
            target = clusters[owner]
        target.node(
            node,
            _op_label(access),
            shape="box",
            style="filled,rounded",
            fillcolor=_OP_COLOUR.get(access.op, "#f9c7c7"),
        )
        in_place = set(access.reads) & set(access.writes)
        for name in access.reads:
            if name not in in_place:
                graph.edge(f"buf_{name}", node)
        for name in access.writes:
            if name in in_place:
                graph.edge(node, f"buf_{name}", dir="both", color="#2f6f3e", tooltip="updated in place")
            else:
                graph.edge(node, f"buf_{name}")
    for cluster in clusters.values():
        graph.subgraph(cluster)
    return graph

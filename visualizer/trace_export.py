"""Write a whole pass trace to share without the viewer: a patch series or one HTML page.

Only passes that changed the IR get a diff; the page carries the catalogue's words for each pass
and the generated CUDA at the end. Every IR is fetched once, through the session.
"""

from __future__ import annotations

import html

from tilescope.core.ide import patch
from tilescope.visualizer.trace_session import TraceSession


def to_patch(session: TraceSession) -> str:
    """Every changing pass as one unified diff, in pipeline order (``git apply``-style headers)."""
    chunks: list[str] = []
    kernel = session.kernel.kernel
    session.fetch_all()
    for record in session.passes:
        if not session.diff(record.index).changed:
            continue
        before = session.ir(record.index - 1)
        after = session.ir(record.index)
        old = f"a/{kernel}.tir" if record.index == 0 else f"a/{kernel}.{record.index - 1:02d}.tir"
        chunks.append(f"# pass {record.index}: {record.label} ({record.duration_ms:.2f} ms)")
        chunks.append(patch(before, after, old, f"b/{kernel}.{record.index:02d}.tir"))
    return "\n".join(chunks) + "\n"


_STYLE = """
body { font: 14px system-ui, sans-serif; margin: 0; display: flex; }
nav { width: 23rem; height: 100vh; overflow-y: auto; position: sticky; top: 0; border-right: 1px solid #ccc;
      font: 12px ui-monospace, monospace; }
nav a { display: block; padding: 1px 6px; color: #222; text-decoration: none; }
nav a.same { color: #999; }
nav h3 { margin: 8px 6px 2px; font: bold 12px system-ui; text-transform: uppercase; color: #666; }
main { padding: 0 1.5rem; flex: 1; min-width: 0; }
pre { font: 12px/1.35 ui-monospace, monospace; background: #fafafa; padding: 6px; overflow-x: auto; }
.add { background: #e6ffec; display: block; } .del { background: #ffebe9; display: block; }
.hunk { color: #0550ae; display: block; } .src { color: #8250df; }
.what { color: #333; } .look { color: #555; font-style: italic; }
"""


def _diff_html(session: TraceSession, index: int) -> str:
    out: list[str] = []
    for row in session.diff(index).rows:
        sign = {"add": "+", "del": "-", "hunk": "", "same": " "}[row.kind]
        src = f'<span class="src">py:{row.source:<4}</span> ' if row.source else " " * 9
        text = html.escape(row.text)
        out.append(f'<span class="{row.kind}">{src}{sign}{text}</span>' if row.kind != "same" else f"{src}{sign}{text}")
    return "\n".join(out)


def to_html(session: TraceSession) -> str:
    """One self-contained page: pass index on the left, each changing pass's diff and explanation."""
    nav: list[str] = []
    body: list[str] = []
    phase = None
    session.fetch_all()
    for record in session.passes:
        if record.phase != phase:
            phase = record.phase
            nav.append(f"<h3>{html.escape(phase)}</h3>")
        diff = session.diff(record.index)
        name = html.escape(record.label)
        counts = f" +{diff.added} −{diff.removed}" if diff.changed else ""
        nav.append(
            f'<a href="#p{record.index}" class="{"changed" if diff.changed else "same"}">'
            f"{record.index:>2} {name}{counts}</a>"
        )
        if not diff.changed:
            continue
        words = (
            f'<p class="what">{html.escape(record.what)}</p>'
            f'<p class="look">Look for: {html.escape(record.look_for or "")}</p>'
            if record.what
            else ""
        )
        body.append(
            f'<section id="p{record.index}"><h2>{record.index}. {name} '
            f"<small>{record.duration_ms:.2f} ms · +{diff.added} −{diff.removed}</small></h2>"
            f"{words}<pre>{_diff_html(session, record.index)}</pre></section>"
        )
    if session.cuda:
        nav.append('<h3>output</h3><a href="#cuda">generated CUDA</a>')
        body.append(f'<section id="cuda"><h2>Generated CUDA</h2><pre>{html.escape(session.cuda)}</pre></section>')
    title = html.escape(session.title)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{_STYLE}</style></head>"
        f"<body><nav>{''.join(nav)}</nav><main><h1>{title}</h1>{''.join(body)}</main></body></html>\n"
    )

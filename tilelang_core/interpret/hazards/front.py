"""What the interpreter runs of a lowering, and the user's lines of its tile operations.

The module right after ``tl.VerifyBufferInit`` (the end of TileLang's front end) is the one the
tile interpreter executes; ``tilescope check`` and ``tilescope run`` both take it from a lowering
they ran anyway, with the loop layouts of ``tl.LayoutInference`` beside it.
"""

from __future__ import annotations

from typing import Any

FRONT_END = "tl.VerifyBufferInit"


def front_end_module(lowered: Any) -> Any | None:
    names = [p.name for p in lowered.passes]
    if FRONT_END not in names:
        return None
    mod = lowered.modules[names.index(FRONT_END)]
    functions = list(mod.functions.values())
    return functions[0] if len(functions) == 1 else None


def tile_lines(path: str, kernel: str) -> dict[frozenset[str], list[int]]:
    """The kernel's tile operations by the buffers they touch, from the static tier's reading of the
    text being analysed (the loader keeps it in ``linecache``)."""
    import linecache

    from tilescope.core.static import analyze_source

    text = "".join(linecache.getlines(path))
    found: dict[frozenset[str], list[int]] = {}
    for k in analyze_source(text, path).kernels if text else []:
        if k.ref.name != kernel:
            continue
        for access in k.accesses:
            if access.line is not None:
                found.setdefault(frozenset([*access.reads, *access.writes]), []).append(access.line)
    return found

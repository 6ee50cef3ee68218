"""TileLang's own parallel-loop race check (``tl.VerifyParallelLoop``), run on demand.

TileLang 0.1.15 ships the check off by default (``TILELANG_ENABLE_DATA_RACE_CHECK``, pass config
``tl.disable_data_race_check``) because it reports false positives: it asks an SMT prover whether
two iterations of a ``T.Parallel`` loop can store different values to one element, and stays
silent only where it can prove they cannot. Its reports are suspicions: the interpreter confirms
or leaves them, and one it does not confirm is at most an information note.
"""

from __future__ import annotations

import re
from typing import Any

from tilescope.core.interpret.hazards.diagnose import Suspicion
from tilescope.core.worker import compiler_warnings

_ITEM = re.compile(r"^\s*\[\d+\]\s*`(?P<access>.+)` is written by multiple threads in loop (?P<vars>.+?)\s*$")
_LOCATION = re.compile(r"^\s*-->\s*(?P<file>.+?):(?P<line>\d+)(?::\d+)?\s*$")


def suspicions(front_end: Any, path: str) -> list[Suspicion] | None:
    """What ``tl.VerifyParallelLoop`` reports on the front-end PrimFunc; ``None`` where the
    release has no such pass."""
    import tilelang
    import tvm

    verify = getattr(tilelang.transform, "VerifyParallelLoop", None)
    if verify is None:
        return None
    with compiler_warnings.captured_stderr() as printed:
        try:
            verify()(tvm.IRModule({"main": front_end}))
        except Exception:  # a verifier that fails says nothing about the kernel
            return []
    return parse(printed[0], path)


def parse(text: str, path: str) -> list[Suspicion]:
    found: list[Suspicion] = []
    pending: tuple[str, str] | None = None
    for line in text.splitlines():
        if item := _ITEM.match(line):
            pending = (item.group("access"), item.group("vars"))
        elif pending and (where := _LOCATION.match(line)):
            if where.group("file") == path:
                found.append(Suspicion(int(where.group("line")), *pending))
            pending = None
    return found

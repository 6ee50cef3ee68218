"""What a grader's child says, read as untrusted: every answer must answer what was asked.

The loader and the kernel processes run the learner's code, so any line on their channel may have
been written by it. Each request carries a fresh id and names the answers it allows; an answer to
another id, an op not asked for, or a field of the wrong kind is a ``Violation``, which voids the
check (``failures.void``): no message, forged or not, can pass one.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from tilescope.core.model import Diagnostic, from_json
from tilescope.puzzles.children import Child
from tilescope.puzzles.protocol import ExecutorRequest
from tilescope.puzzles.verdict import Param


class Violation(Exception):
    """A message that answers nothing the grader asked."""


def expect(reply: dict[str, Any] | str, rid: str, ops: set[str]) -> dict[str, Any]:
    """``reply``, if it is a message answering request ``rid`` with one of ``ops``."""
    if not isinstance(reply, dict):
        raise Violation(f"a line that is no message: {reply[:120]!r}")
    if reply.get("id") != rid or reply.get("op") not in ops:
        raise Violation(f"a message that answers nothing it asked: {json.dumps(reply)[:160]}")
    return reply


def call(child: Child, request: ExecutorRequest, timeout_s: float, ops: set[str]) -> dict[str, Any]:
    """The child's answer to ``request``, checked to answer it; the child runs user code, so each
    field of the answer is checked where it is read."""
    rid = secrets.token_hex(8)
    child.send({"id": rid, **request})
    return expect(child.receive(timeout_s), rid, ops)


def diagnostic_of(data: Any) -> Diagnostic:
    """A diagnostic a child sent, or a ``Violation`` when it is none."""
    try:
        diagnostic = from_json(Diagnostic, data)
        if isinstance(diagnostic, Diagnostic) and isinstance(diagnostic.message, str):
            return diagnostic
    except Exception:
        pass
    raise Violation(f"a malformed diagnostic: {json.dumps(data)[:160]}")


def params_of(compiled: dict[str, Any]) -> list[Param]:
    """The kernel's parameters, as a ``compiled`` answer declares them."""
    return [Param(p["name"], tuple(p["shape"]), p["dtype"]) for p in compiled["params"]]

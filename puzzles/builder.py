"""The only process that runs a learner's Python: load the file, call its factory, send back PrimFuncs.

A fresh process for every check (code a file runs can change the process it runs in): forked from the
warm loader (``loader_zygote``) where the kernel offers Landlock, else started as ``python -m`` this module;
either way under an address-space limit and sealed (``seal``): the grader sends the file's text, since the loader may
not read every folder a file can be graded from (the puzzle content among them). Its whole
output is a PrimFunc as TVM JSON per requested argument set, or a diagnostic: a program that the
grader compiles elsewhere and checks against its own reference, so nothing written on its channel
can make a check pass.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from tilescope.core.codes import diagnostic
from tilescope.core.model import Span, to_json
from tilescope.puzzles.children import ADDRESS_SPACE, reply_channel
from tilescope.puzzles.protocol import BuildError, BuildPuzzleRequest, Built, Done, Ready


def _send(replies: IO[str], message: Built | BuildError | Done | Ready) -> None:
    import json

    replies.write(json.dumps(message) + "\n")
    replies.flush()


def _memory_diagnostic(path: str, err: BaseException) -> dict[str, Any]:
    import traceback

    line = 1
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == path and frame.lineno:
            line = frame.lineno
    return to_json(diagnostic("out-of-memory", Span(line), limit_gib=ADDRESS_SPACE >> 30))


def build_all(request: BuildPuzzleRequest, replies: IO[str]) -> None:
    """Answer one build request: a reply per argument set, then ``done``."""
    from tilescope.core.model import to_json
    from tilescope.puzzles import runner
    from tvm import ir

    rid, path, source = request["id"], request["path"], request["source"]
    for index, args in enumerate(request["arg_sets"]):
        try:
            func = runner.build(path, source, dict(args))
            _send(replies, {"id": rid, "op": "built", "index": index, "prim_func": ir.save_json(func)})
        except runner.CompileFailure as failure:
            _send(replies, {"id": rid, "op": "build-error", "index": index, "diagnostic": to_json(failure.diagnostic)})
            break
        except MemoryError as err:
            _send(
                replies, {"id": rid, "op": "build-error", "index": index, "diagnostic": _memory_diagnostic(path, err)}
            )
            break
    _send(replies, {"id": rid, "op": "done"})


def prepare() -> None:
    """Import what a build needs, before the first request (while the grader waits): the process's own start."""
    import tilelang.language  # noqa: F401
    from tilescope.core.model import to_json  # noqa: F401
    from tilescope.puzzles import runner  # noqa: F401


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Say ready, then answer each build request on ``requests`` until it ends."""
    import json

    _send(replies, {"op": "ready"})
    for line in requests:
        build_all(json.loads(line), replies)


def main() -> None:
    replies = reply_channel()
    prepare()
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()

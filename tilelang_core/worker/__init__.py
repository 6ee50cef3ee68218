"""What runs inside the compiler worker process, which owns TileLang: loading the user's file,
building and lowering a kernel, reading the model out of TVM's IR, autotune configs, ptxas, and
timing on a GPU when one is asked for.

Runs in the worker (``worker.main``), a supervised child in the user's own interpreter, which may
lack Tilescope's dependencies: only the standard library, TileLang and what it brings (TVM, torch,
numpy). May import the ground floor, ``compat``, ``perf``, ``record``, ``interpret``, ``static`` and
``compiler.discovery`` (the kernels of a file, which both sides work out), never ``cli``, ``ide``
or the rest of ``compiler``.
"""

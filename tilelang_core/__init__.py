"""Tilescope's core: the TileLang compiler's knowledge of a kernel as a typed, queryable model.

The top level is the ground floor: plain records and pure functions over them (``model``, ``codes``,
``display``, ``dtypes``, ``targets``, ``lines``, ``protocol``, ``layout_eval``, ...) that every room
may import. Each room is a folder named for where its code runs; its ``__init__`` says what it may
import, and ``tests/test_imports.py`` holds the table (``LAYERS``):

- ``static/``: reads source without running it (editor and host); never TileLang.
- ``ide/``: editor views as plain data, for the language server and the other front ends.
- ``cli/``: every ``tilescope`` verb and its options (host).
- ``compiler/``: the host side of the compiler tier (which kernels, which sizes, which worker);
  never imports TileLang.
- ``sandbox/``: supervision, Landlock, framing: how a process that runs user code is started and held.
- ``worker/``: what runs inside the compiler worker, with TileLang and TVM.
- ``compat/``: one place for what differs between TileLang releases (worker side).
- ``record/``: ``tilescope record`` and the dry run: the host's drivers and the hooks loaded into the
  user's own program.
- ``perf/``: performance arithmetic (banks, occupancy, peaks) and its text; pure data, no TVM.
- ``interpret/``: the tile interpreter, with ``interpret/hazards/`` watching its accesses.

Importing this package is cheap: it imports none of them.
"""

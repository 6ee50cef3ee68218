"""``tilescope record`` and the dry run: learning a kernel's sizes from the program that builds it.

Two sides. ``recorder`` and ``dry_run`` (with ``bytecode``) run on the host and start the user's program under
supervision; the hook (``record_hook`` and its ``hook_*`` modules), ``record_values``, ``fake_device`` and
``dry_run_standin`` are copied beside it (``recorder.HOOK_MODULES``) and run inside the user's own
process (the only files here that do), so they import the standard library alone. Nothing here
imports TileLang (the hook finds it in the user's process at run time).
"""

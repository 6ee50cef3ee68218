"""Every ``tilescope`` verb and the options they share: parsing, printing, exit codes.

Runs on the host, in the user's terminal or CI. May import the ground floor and every room that
computes (``compiler``, ``record``, ``perf``, ``static``, ``ide`` for views it prints), never a
worker module by import (the worker runs in another process: ``profile`` names ``worker.gpu_run``
as a module to start, which is not an import). Nothing outside ``cli/`` imports a command module,
except the visualizer's verbs, which share the options (``kernel_options``, ``terminal``,
``check_cmd``'s path handling).
"""

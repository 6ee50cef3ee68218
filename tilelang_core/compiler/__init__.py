"""The host side of the compiler tier: which kernels a file has, which sizes to build them at, and
the warm, supervised worker process (``service.Analyzer``) that answers for them, one file, many
files (``batch``), many variants (``variants``) or a Ray cluster (``cluster``).

Runs on the host (CLI, language server, MCP server, grader). Never imports TileLang or TVM, nor a
``worker`` module: it talks to the worker through ``protocol`` messages. May import the ground
floor, ``sandbox``, ``record``, ``static``.
"""

"""Tilescope: see what the TileLang compiler inferred, in your editor and terminal.

The import root of every part: ``tilescope.core`` (the model, both tiers), ``tilescope.lsp`` (the
language server), ``tilescope.visualizer`` (terminal and image views) and ``tilescope.puzzles``.
Importing it is cheap: it imports none of them.
"""

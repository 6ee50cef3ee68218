"""The TileLang language server: a thin LSP adapter over ``tilescope.core``.

Every handler turns protocol parameters into one core call and the answer into lsprotocol types;
shapes, dtypes and layouts are computed in the core, never here.
"""

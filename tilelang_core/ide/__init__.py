"""The editor layer: plain, typed, JSON-ready views in editor terms, computed from the model.

Every front end (CLI, terminal viewer, plots, language server, VS Code) draws these and derives none.
"""

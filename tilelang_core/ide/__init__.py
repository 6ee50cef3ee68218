"""Editor-facing views of the model: answers in editor terms (files, lines, edits), computed once
here and drawn by every client (the language server, the terminal, the VS Code extension)."""

"""Graded TileLang puzzles: content, a grader that runs the real compiler, progress, and an app."""

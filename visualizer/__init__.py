"""Terminal and image views of what the compiler inferred: pass diffs, layouts, tile dataflow.

Every view reads ``tilescope.core``'s model; none runs the compiler itself.
"""

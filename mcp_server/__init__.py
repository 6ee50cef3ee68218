"""Tilescope for coding agents: a Model Context Protocol server over the core's views."""

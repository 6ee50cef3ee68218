"""``python -m tilescope.lsp``: the language server without going through the ``tilescope`` dispatcher."""

import argparse
import sys

from tilescope.lsp.cli import register

parser = argparse.ArgumentParser(prog="python -m tilescope.lsp")
register(parser.add_subparsers(dest="command", required=True))
arguments = parser.parse_args(["lsp", *sys.argv[1:]])
sys.exit(arguments.func(arguments))

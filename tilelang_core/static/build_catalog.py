"""Regenerate ``primitives.json``, the catalog used when no TileLang is installed beside Tilescope.

It is read from the installed release's sources exactly as ``catalog`` reads any release (nothing
is imported); ``tests/static/test_catalog.py`` checks the shipped file is still what the installed
release says. Run: ``python -m tilescope.core.static.build_catalog``.
"""

from __future__ import annotations

import json

from tilescope.core.static.catalog import SHIPPED, installed_package
from tilescope.core.static.catalog_source import read_catalog


def main() -> None:
    package = installed_package()
    if package is None:
        raise SystemExit("no TileLang installed for this interpreter")
    SHIPPED.write_text(json.dumps(read_catalog(package), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

"""``python -m tilescope``: the command line without a console script on PATH."""

import sys

from tilescope.core.cli import main

sys.exit(main())

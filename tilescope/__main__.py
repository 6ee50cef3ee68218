"""``python -m tilescope``: the command line without a console script on PATH."""

import sys

from tilescope.core.cli.main import main

sys.exit(main())

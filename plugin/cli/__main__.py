"""``python -m composedyn.cli``: the command line, as the console script ``composedyn``."""

import sys

from composedyn.cli.program import main

sys.exit(main())

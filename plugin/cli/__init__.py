"""The ``composedyn`` command line: the program (parser, common robot options, ``main``), one module per
subcommand in ``commands/``, and the options and robot loading that several subcommands share.

The console script is ``composedyn = "composedyn.cli:main"``; ``python -m composedyn.cli`` runs the same.
"""

from composedyn.cli.program import main

__all__ = ["main"]

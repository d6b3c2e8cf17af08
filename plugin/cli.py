"""The ``composedyn`` command line.

Each subcommand lives in its own module under ``composedyn.commands`` and
exposes ``register(subparsers)``, which adds a parser whose ``run(args)``
default returns the exit status.  Bad input of any kind prints one line on
stderr and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings

from composedyn.errors import ModelError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    import composedyn.commands as commands

    parser = _Parser(prog="composedyn", description="Robot dynamics from URDF or DH tables.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"composedyn.commands.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 ok, 1 limit exceeded, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return int(args.run(args) or 0)
    except (ModelError, ValueError, OSError, KeyError, RuntimeError) as e:  # e.g. integration failed
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"composedyn: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

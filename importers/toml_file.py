"""Read a TOML description file; every failure is a ModelError naming the file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from composedyn.dynamics.errors import ModelError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def read_toml(path: str | os.PathLike, missing: str) -> dict:
    """The parsed document of the TOML file ``path``.

    ``missing`` completes the message when the file does not exist, e.g.
    ``"no such DH table file"``.  Syntax errors, non-UTF-8 bytes and nesting deeper
    than the parser can follow raise ModelError naming the file.
    """
    p = Path(path)
    if not p.is_file():
        raise ModelError(f"{p}: {missing}")
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise ModelError(f"{p}: invalid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ModelError(f"{p}: invalid TOML (not UTF-8): {e}") from None
    except RecursionError:  # the parser recurses once per nesting level
        raise ModelError(f"{p}: invalid TOML: arrays or tables nested deeper than the parser's limit "
                         f"(Python's recursion limit, {sys.getrecursionlimit()})") from None

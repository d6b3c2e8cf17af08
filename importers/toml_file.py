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
    ``"no such DH table file"``.  Syntax errors and non-UTF-8 bytes raise
    ModelError naming the file.
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

"""Atomic file output: nothing half-written on failure."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def _temp_beside(path: Path) -> tuple[int, str]:
    """(fd, name) of a new temporary file in ``path``'s folder, with the permissions
    a plain ``open(path, "w")`` would give (mkstemp's are 0600); OSError names ``path``."""
    if not path.parent.is_dir():
        raise OSError(f"{path}: folder {path.parent} does not exist")
    if path.is_dir():
        raise OSError(f"{path}: is a folder, expected a file name")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    except OSError as e:
        raise OSError(f"{path}: cannot write in folder {path.parent}: {e.strerror}") from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    return fd, tmp


def write_atomic(path, content: str | Callable[[str], None]) -> None:
    """Write ``content`` (text, or a function that writes a given temporary
    path) next to ``path`` and rename it into place only when complete."""
    path = Path(path)
    fd, tmp = _temp_beside(path)
    try:
        if callable(content):
            os.close(fd)
            content(tmp)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(content)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Staged:
    """Outputs written to temporary files first and renamed into place together
    by :meth:`commit`, so that a failure part-way writes nothing.

    ``path = staged.tmp(final)`` gives a temporary path (same folder and
    suffix) to write to; leaving the ``with`` block by an exception deletes them.
    """

    def __init__(self):
        self._pairs: list[tuple[str, Path]] = []

    def tmp(self, final) -> str:
        final = Path(final)
        fd, tmp = _temp_beside(final)
        os.close(fd)
        self._pairs.append((tmp, final))
        return tmp

    def commit(self) -> None:
        for tmp, final in self._pairs:
            os.replace(tmp, final)
        self._pairs.clear()

    def discard(self) -> None:
        for tmp, _ in self._pairs:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._pairs.clear()

    def __enter__(self) -> "Staged":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()

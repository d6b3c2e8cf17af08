"""Atomic file output: nothing half-written on failure, and no output that replaces an input."""

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


def printable(text: str) -> str:
    """``text`` with the characters UTF-8 cannot encode (the undecodable bytes of a file name,
    which Python reads as lone surrogates) written as ``\\udcXX`` escapes, as JSON writes them."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name the same file (``os.path.samefile`` when both
    exist, else the same resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def refuse_inputs(outputs, inputs) -> None:
    """ValueError, one line naming the option and the path, when an output of ``outputs``
    ((label, path) pairs, the label naming the option and the path as given, e.g.
    "--json out.json") is the same file as another output or as an input of ``inputs`` ((what, path) pairs, e.g.
    ("ROBOT", "arm.urdf"); a path that is not an existing file or folder, such as a
    bundled robot name, is skipped)."""
    for k, (label, path) in enumerate(outputs):  # two outputs into one file: one would silently replace the other
        for other, earlier in outputs[:k]:
            if same_file(path, earlier):
                raise ValueError(f"{label}: the same file as the output {other}; choose another output path")
    inputs = [(what, str(p)) for what, p in inputs if os.path.exists(p)]
    for label, path in outputs:
        for what, given in inputs:
            if same_file(path, given):
                raise ValueError(f"{label}: the same file as the input {what} {given}; "
                                 "writing it would replace that input, choose another output path")


class Staged:
    """Outputs written to temporary files first and renamed into place together
    by :meth:`commit`, so that a failure part-way writes nothing.

    ``path = staged.tmp(final)`` gives a temporary path (same folder and
    suffix) to write to (OSError naming ``final`` when its folder is missing or
    cannot be written, or ``final`` is a folder); :meth:`drop` forgets some of
    them; leaving the ``with`` block by an exception deletes them.
    """

    def __init__(self):
        self._pairs: list[tuple[str, Path]] = []

    def tmp(self, final) -> str:
        final = Path(final)
        fd, tmp = _temp_beside(final)
        os.close(fd)
        self._pairs.append((tmp, final))
        return tmp

    def drop(self, tmps) -> None:
        """Delete the temporary files ``tmps`` (paths given by :meth:`tmp`): their outputs are not written."""
        tmps = set(tmps)
        for tmp, _ in self._pairs:
            if tmp in tmps and os.path.exists(tmp):
                os.unlink(tmp)
        self._pairs = [(tmp, final) for tmp, final in self._pairs if tmp not in tmps]

    def commit(self) -> None:
        """Rename every output into place, once every final path is checked (OSError naming
        the first that is a folder or whose folder is gone, with nothing renamed)."""
        for _, final in self._pairs:
            if final.is_dir():
                raise OSError(f"{final}: is a folder, expected a file name")
            if not final.parent.is_dir():
                raise OSError(f"{final}: folder {final.parent} does not exist")
        for tmp, final in self._pairs:
            try:
                os.replace(tmp, final)
            except OSError as e:
                raise OSError(f"{final}: cannot write: {e.strerror}") from None
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

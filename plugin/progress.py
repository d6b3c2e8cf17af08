"""A minimal progress bar on stderr, shown only once a run has lasted ``delay`` seconds."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class Progress:
    """Count ``total`` steps; draw ``label [#####.....] k/total`` on ``stream``.

    Nothing is drawn until ``delay`` seconds have passed since creation, so
    short runs stay silent.  Use as a context manager; ``close`` ends the line.
    """

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None, delay: float = 1.0,
                 width: int = 30, clock: Callable[[], float] = time.monotonic):
        self.total, self.label, self.width = max(int(total), 1), label, width
        self.stream = sys.stderr if stream is None else stream
        self.clock, self.start, self.delay = clock, clock(), delay
        self.done, self.shown, self._width_drawn = 0, False, 0

    def advance(self, steps: int = 1, label: str | None = None) -> None:
        self.done = min(self.done + steps, self.total)
        if label is not None:
            self.label = label
        if self.shown or self.clock() - self.start >= self.delay:
            self._draw()

    def _draw(self) -> None:
        fill = int(self.width * self.done / self.total)
        bar = "#" * fill + "." * (self.width - fill)
        text = f"{self.label} [{bar}] {self.done}/{self.total}"
        self.stream.write("\r" + text.ljust(self._width_drawn))
        self._width_drawn = len(text)
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, exc_type, *rest) -> None:
        if exc_type is not None and self.shown:  # wipe the bar: the error message gets a clean line
            self.stream.write("\r" + " " * self._width_drawn + "\r")
            self.stream.flush()
        else:
            self.close()

"""A minimal progress bar on stderr: drawn only on a terminal, once a run has lasted ``delay`` seconds."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class Progress:
    """Count ``total`` steps; draw ``label [#####.....] k/total`` on ``stream``.

    Nothing is drawn when ``stream`` is not a terminal (a file, a pipe, a CI
    log), nor until ``delay`` seconds have passed since creation, so short runs
    stay silent.  Use as a context manager; ``close`` ends the line.
    """

    REDRAW = 0.1  # s between redraws

    def __init__(self, total: int, label: str = "", stream: TextIO | None = None, delay: float = 1.0,
                 width: int = 30, clock: Callable[[], float] = time.monotonic):
        self.total, self.label, self.width = max(int(total), 1), label, width
        self.stream = sys.stderr if stream is None else stream
        self.clock, self.start, self.delay = clock, clock(), delay
        self.done, self.shown, self._width_drawn, self._drawn_at = 0.0, False, 0, 0.0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(isatty is not None and isatty())

    def advance(self, steps: float = 1, label: str | None = None) -> None:
        """Count ``steps`` more done (and optionally change the label)."""
        self.update(self.done + steps, label)

    def update(self, done: float, label: str | None = None) -> None:
        """Set the count to ``done`` (may be fractional, e.g. the share of a simulation).

        Redraws at most every ``REDRAW`` seconds, except on a new label or at the end.
        """
        self.done = min(max(float(done), 0.0), self.total)
        changed = label is not None and label != self.label
        if label is not None:
            self.label = label
        if not self.enabled:
            return
        now = self.clock()
        if now - self.start < self.delay:
            return
        if not self.shown or changed or self.done >= self.total or now - self._drawn_at >= self.REDRAW:
            self._draw(now)

    def _draw(self, now: float) -> None:
        fill = int(self.width * self.done / self.total)
        bar = "#" * fill + "." * (self.width - fill)
        text = f"{self.label} [{bar}] {int(self.done)}/{self.total}"
        self.stream.write("\r" + text.ljust(self._width_drawn))
        self.stream.flush()
        self._width_drawn, self._drawn_at, self.shown = len(text), now, True

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

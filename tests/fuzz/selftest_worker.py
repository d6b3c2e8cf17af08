"""A worker whose case 1 segfaults and case 2 never answers: shows that :mod:`fuzz.runner`
records a crash and a hang and goes on with the next case (``tests/test_robustness_fuzz.py``)."""

from __future__ import annotations

import ctypes
import sys
import time

from fuzz.runner import begin, end


def main(argv: list[str]) -> int:
    for g in range(int(argv[0]), 4):
        begin(sys.stdout, {"g": g})
        if g == 1:
            ctypes.string_at(0)  # reads address 0: SIGSEGV
        if g == 2:
            time.sleep(60)
        end(sys.stdout, {"g": g, "outcome": "result"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

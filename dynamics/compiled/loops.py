"""Sample loops: ``serial_and_parallel`` compiles a kernel's batch loop twice; input checks they share."""

from __future__ import annotations

import math
import types

from composedyn.dynamics.compiled.jit import njit


def serial_and_parallel(loop, **options):
    """Compile a sample loop (written with ``prange``) twice: serial and parallel (``options``:
    more ``njit`` options for both, e.g. ``fastmath``).

    The two copies get distinct names because numba's on-disk cache keys its
    entries by function name and line only, not by the ``parallel`` flag: one
    Python function compiled both ways would load the other's machine code.
    """
    def renamed(suffix: str):
        f = types.FunctionType(loop.__code__, loop.__globals__, loop.__name__ + suffix,
                               loop.__defaults__, loop.__closure__)
        f.__qualname__, f.__doc__ = loop.__qualname__ + suffix, loop.__doc__
        return f
    return (njit(cache=True, **options)(renamed("_serial")),
            njit(cache=True, parallel=True, **options)(renamed("_parallel")))


@njit(cache=True, inline="always")
def all_finite(x):
    """Whether every entry of the vector x is finite (no NaN, no inf).

    Inlined and reading x in place: a slice or a non-inlined call would make
    numba count references (atomic operations) on every call."""
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True

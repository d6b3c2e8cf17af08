"""The finite-input check the generated entries and batch loops share (:mod:`.declare`)."""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit


@njit(cache=True, inline="always")
def all_finite(x):
    """Whether every entry of the vector x is finite (no NaN, no inf).

    Inlined and reading x in place: a slice or a non-inlined call would make
    numba count references (atomic operations) on every call."""
    for i in range(x.shape[0]):
        if not math.isfinite(x[i]):
            return False
    return True

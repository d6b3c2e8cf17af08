"""Checked single-sample entries: the ``Robot`` methods' lean path into the kernels.

A ``Robot`` method called with plain vectors (numpy float64, C-contiguous,
shape (n,)), no external wrench and no mimic projection calls one of these
entries instead of its general path.  Each entry does, in compiled code, the
checks the general path does in Python, and reports the outcome as its
return value:

* 0 -- the result is in ``out``;
* 1 -- an argument does not have n = ``fm.shape[0]`` entries;
* 2 -- an argument holds NaN or inf;
* 3 -- (forward dynamics) M(q) is not positive definite.

Integer flags are passed to the kernels as ``np.int64(k)``, not as literals, so
that the kernels are not compiled again for ``Literal[int]`` arguments (the
Python-side callers pass int64).  On a non-zero status the method re-runs its general path, which raises the
error naming the argument (or the joints of a singular M).  The entries
have explicit signatures, so numba never compiles a variant for other input:
an int or float32 array, a strided view or a 2-D batch raises ``TypeError``
at the call, which the method also answers with its general path.

``SIGNATURES`` maps entry names to (signature, Python function);
``compiled(name)`` compiles one (or loads it from the disk cache) when it is
first needed, so a process pays only for the entries it calls.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from composedyn.dynamics.compiled.coriolis import coriolis_one
from composedyn.dynamics.compiled.crba import crba_one
from composedyn.dynamics.compiled.aba import aba_one
from composedyn.dynamics.compiled.gravity import gravity_one
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW
from composedyn.dynamics.compiled.rnea import rnea_one



@njit(cache=True, inline="always")
def _check(n, x):
    """0 when x has n finite entries, 1 when its length is not n, 2 when it holds NaN or inf.

    Inlined, and reading x in place: a slice or a non-inlined call would make
    numba count references (atomic operations) on every call."""
    if x.shape[0] != n:
        return 1
    for i in range(n):
        if not math.isfinite(x[i]):
            return 2
    return 0


def inverse_dynamics(im, fm, q, qd, qdd, out):
    """tau = M qdd + C qd + g + friction (armature in M) into out (n,)."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, qdd))
    if s == 0:
        rnea_one(im, fm, q, qd, qdd, _NO_FW, np.int64(1), np.int64(3), out)
    return s


def mass_matrix(im, fm, q, out):
    """M(q) with armature into out (n, n)."""
    s = _check(fm.shape[0], q)
    if s == 0:
        crba_one(im, fm, q, np.int64(1), out)
    return s


def coriolis_matrix(im, fm, q, qd, out):
    """C(q, qd) (Christoffel form) into out (n, n)."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd))
    if s == 0:
        coriolis_one(im, fm, q, qd, out)
    return s


def gravity_torques(im, fm, q, out):
    """g(q) into out (n,)."""
    s = _check(fm.shape[0], q)
    if s == 0:
        gravity_one(im, fm, q, out)
    return s


def bias_torques(im, fm, q, qd, out):
    """C(q, qd) qd + g(q), no friction, into out (n,)."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd))
    if s == 0:
        rnea_one(im, fm, q, qd, np.zeros(q.shape[0]), _NO_FW, np.int64(1), np.int64(0), out)
    return s


def forward_dynamics(im, fm, q, qd, tau, smooth, out):
    """qdd solving M qdd = tau - C qd - g - friction into out (n,); smooth > 0: tanh friction."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, tau))
    if s == 0 and aba_one(im, fm, q, qd, tau, _NO_FW, np.int64(1), smooth, out):
        s = 3
    return s


_IM, _FM, _V, _A = "int64[:, ::1]", "float64[:, ::1]", "float64[::1]", "float64[:, ::1]"
SIGNATURES = {
    "inverse_dynamics": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, {_V})", inverse_dynamics),
    "mass_matrix": (f"int64({_IM}, {_FM}, {_V}, {_A})", mass_matrix),
    "coriolis_matrix": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_A})", coriolis_matrix),
    "gravity_torques": (f"int64({_IM}, {_FM}, {_V}, {_V})", gravity_torques),
    "bias_torques": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V})", bias_torques),
    "forward_dynamics": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, float64, {_V})", forward_dynamics),
}


def compiled(name: str):
    """The compiled entry ``name`` (compiled now, or loaded from the disk cache)."""
    sig, func = SIGNATURES[name]
    return njit(sig, cache=True)(func)

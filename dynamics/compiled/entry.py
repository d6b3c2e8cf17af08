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

The entries call the kernels' ``*_into`` functions with literal flags (the
kernels' ``Literal[int]`` specialisations): numba then compiles those
specialisations together with the entry and LLVM inlines them into it.
Calling an overload that already exists (e.g. the int64 one the Python-side
callers use, possibly loaded from the disk cache as machine code) links it
as an opaque call instead: measured ~0.25 us slower per call on the UR5
mass matrix (0.99 vs 0.72 us, Pinocchio's ``crba`` 0.70 us).  The price is
compile time: each entry compiles its kernel once more (``warm_up``).
On a non-zero status the method re-runs its general path, which raises the
error naming the argument (or the joints of a singular M).  The entries
have explicit signatures (float64 vectors of any stride), so numba never
compiles a variant for other input: an int or float32 array or a 2-D batch
raises ``TypeError`` at the call (slow: ~0.1 ms), which the method answers
with its general path; the methods therefore send input whose first vector is
not float64 to the general path before calling.

``SIGNATURES`` maps entry names to (signature, Python function);
``compiled(name)`` compiles one (or loads it from the disk cache) when it is
first needed, so a process pays only for the entries it calls.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from composedyn.dynamics.compiled.coriolis import coriolis_one
from composedyn.dynamics.compiled.crba import SCRATCH as CRBA_SCRATCH
from composedyn.dynamics.compiled.crba import crba_into
from composedyn.dynamics.compiled.aba import SCRATCH as ABA_SCRATCH
from composedyn.dynamics.compiled.aba import aba_into
from composedyn.dynamics.compiled.gravity import gravity_one
from composedyn.dynamics.compiled.layout import NO_FW as _NO_FW
from composedyn.dynamics.compiled.rnea import SCRATCH as RNEA_SCRATCH
from composedyn.dynamics.compiled.rnea import rnea_into



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
        rnea_into(im, fm, q, qd, qdd, _NO_FW, 1, 3, out, np.empty((n + 1, RNEA_SCRATCH)))
    return s


def inverse_dynamics_rigid(im, fm, q, qd, qdd, out):
    """:func:`inverse_dynamics` without joint friction (damping, Coulomb); armature kept."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, qdd))
    if s == 0:
        rnea_into(im, fm, q, qd, qdd, _NO_FW, 1, 1, out, np.empty((n + 1, RNEA_SCRATCH)))
    return s


def mass_matrix(im, fm, q, out):
    """M(q) with armature into out (n, n)."""
    n = fm.shape[0]
    s = _check(n, q)
    if s == 0:
        crba_into(im, fm, q, 1, out, np.empty((n, CRBA_SCRATCH)))
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
        rnea_into(im, fm, q, qd, np.zeros(n), _NO_FW, 1, 0, out, np.empty((n + 1, RNEA_SCRATCH)))
    return s


def forward_dynamics(im, fm, q, qd, tau, smooth, out):
    """qdd solving M qdd = tau - C qd - g - friction into out (n,); smooth > 0: tanh friction."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, tau))
    if s == 0 and aba_into(im, fm, q, qd, tau, _NO_FW, 1, smooth, out, np.empty((n + 1, ABA_SCRATCH))):
        s = 3
    return s


def forward_dynamics_rigid(im, fm, q, qd, tau, smooth, out):
    """:func:`forward_dynamics` without joint friction (``smooth`` unused)."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, tau))
    if s == 0 and aba_into(im, fm, q, qd, tau, _NO_FW, 0, smooth, out, np.empty((n + 1, ABA_SCRATCH))):
        s = 3
    return s


_IM, _FM, _A = "int64[:, ::1]", "float64[:, ::1]", "float64[:, ::1]"
_V = "float64[:]"  # input vectors: any stride (a column of a state array goes in as it is)
_O = "float64[::1]"  # output vectors
SIGNATURES = {
    "inverse_dynamics": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, {_O})", inverse_dynamics),
    "mass_matrix": (f"int64({_IM}, {_FM}, {_V}, {_A})", mass_matrix),
    "coriolis_matrix": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_A})", coriolis_matrix),
    "gravity_torques": (f"int64({_IM}, {_FM}, {_V}, {_O})", gravity_torques),
    "bias_torques": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_O})", bias_torques),
    "forward_dynamics": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, float64, {_O})", forward_dynamics),
    "inverse_dynamics_rigid": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, {_O})", inverse_dynamics_rigid),
    "forward_dynamics_rigid": (f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, float64, {_O})", forward_dynamics_rigid),
}


def compiled(name: str):
    """The compiled entry ``name`` (compiled now, or loaded from the disk cache)."""
    sig, func = SIGNATURES[name]
    return njit(sig, cache=True)(func)


# ---- derivatives ----
from composedyn.dynamics.compiled.derivatives import SCRATCH as DER_SCRATCH  # noqa: E402
from composedyn.dynamics.compiled.derivatives import derivatives_into  # noqa: E402
from composedyn.dynamics.compiled.fd_derivatives import fd_derivatives_one  # noqa: E402

_NO_P = np.empty((0, 9))
_NO_P.flags.writeable = False


def inverse_dynamics_derivatives(im, fm, q, qd, qdd, fric, smooth, dq, dqd):
    """d tau / d q, d tau / d qd (n, n) into dq, dqd; fric: 1 with friction (tanh Coulomb if smooth > 0)."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, qdd))
    if s == 0:
        derivatives_into(im, fm, q, qd, qdd, _NO_FW, _NO_P, 1, fric, smooth, dq, dqd, np.empty((n, DER_SCRATCH)))
    return s


def forward_dynamics_derivatives(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
    """d qdd / d q, d qdd / d qd, M^-1 (n, n) into aq, aqd, minv."""
    n = fm.shape[0]
    s = max(_check(n, q), _check(n, qd), _check(n, tau))
    if s == 0 and fd_derivatives_one(im, fm, q, qd, tau, fric, smooth, aq, aqd, minv):
        s = 3
    return s


SIGNATURES["inverse_dynamics_derivatives"] = (
    f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, int64, float64, {_A}, {_A})", inverse_dynamics_derivatives)
SIGNATURES["forward_dynamics_derivatives"] = (
    f"int64({_IM}, {_FM}, {_V}, {_V}, {_V}, int64, float64, {_A}, {_A}, {_A})", forward_dynamics_derivatives)

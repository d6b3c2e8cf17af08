"""Pack a closed chain's loops and coordinate partition into the two arrays its kernel reads.

``cm`` (int64, 1-D): ``n, k, m, L``, the independent joints ``ind`` (k), the
dependent joints ``dep`` (m), then per loop ``LOOP_INTS`` entries: body of
end a, body of end b (-1: the fixed base), number of rows, 1 when the loop
has orientation rows, and its rows of the stacked 6-vector
(x_a - x_b, rotvec(R_a R_b^T)), padded with -1; then per joint (n) 1 when its
coordinate is periodic (an angle that enters the loops through its sine and
cosine only: the closure reduces it to [-pi, pi)), else 0.

``cf`` (float64, 1-D): the Newton tolerance, per loop ``LOOP_FLOATS`` entries
(end a: point c (3) and rotation Rc (9, row-major) in its body frame; end b
the same), then the last assembled configuration (n) which the kernel updates
in place (the start of the next position closure).

``MODES`` names what :func:`composedyn.dynamics.compiled.closed.closed_one`
computes.  NumPy only: importing this module does not import numba.
"""

from __future__ import annotations

import numpy as np

LOOP_INTS, LOOP_FLOATS, HEAD = 10, 24, 4
FD, ID, FORCES, MASS, POSITIONS, VELOCITIES, ACCELERATIONS = range(7)
MODES = {"forward_dynamics": FD, "inverse_dynamics": ID, "constraint_forces": FORCES, "mass_matrix": MASS,
         "positions": POSITIONS, "velocities": VELOCITIES, "accelerations": ACCELERATIONS}
_TURN_HI, _TURN_LO = 6.28125, 1.9353071795864769e-3  # 2 pi = HI + LO to 1e-19; k HI and x - k HI are exact


def wrap_angles(x):
    """Angles x (rad; an array, or one float in a kernel) reduced by whole turns to [-pi, pi), the
    turns subtracted in two parts so that the result is the float x's angle to ~1e-16 per thousand
    turns (a plain remainder by the float 2 pi is off by 2.4e-13 at a thousand turns, above a
    closure's default tolerance)."""
    k = np.floor((x + np.pi) / (2.0 * np.pi))
    return (x - k * _TURN_HI) - k * _TURN_LO


def pack_closed(n: int, ind, dep, ends, rows, tol: float, periodic) -> tuple[np.ndarray, np.ndarray]:
    """``(cm, cf)`` for a chain of n joints.

    ``ends``: per loop ((body_a, c_a, Rc_a), (body_b, c_b, Rc_b)) as from
    :func:`composedyn.dynamics.constraints.loops.loop_ends`; ``rows``: per loop
    its rows of the stacked 6-vector; ``periodic`` (n,) bool: the joints whose
    coordinate is an angle the closure may reduce by whole turns.
    """
    L = len(ends)
    cm = np.full(HEAD + len(ind) + len(dep) + LOOP_INTS * L + n, -1, dtype=np.int64)
    cm[len(cm) - n:] = np.asarray(periodic, dtype=bool)
    cm[:HEAD] = n, len(ind), len(dep), L
    cm[HEAD:HEAD + len(ind)] = ind
    cm[HEAD + len(ind):HEAD + len(ind) + len(dep)] = dep
    cf = np.zeros(1 + LOOP_FLOATS * L + n)
    cf[0] = tol
    for i, (((ba, ca, Ra), (bb, cb, Rb)), r) in enumerate(zip(ends, rows)):
        o = HEAD + len(ind) + len(dep) + LOOP_INTS * i
        cm[o:o + 4] = ba, bb, len(r), int(any(x >= 3 for x in r))
        cm[o + 4:o + 4 + len(r)] = r
        f = 1 + LOOP_FLOATS * i
        cf[f:f + 3], cf[f + 3:f + 12] = ca, np.asarray(Ra).reshape(9)
        cf[f + 12:f + 15], cf[f + 15:f + 24] = cb, np.asarray(Rb).reshape(9)
    return cm, cf

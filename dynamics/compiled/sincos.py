"""Sine and cosine of one angle together, branch-free, for the joint model (:func:`.joint.joint_angle`).

``math.sin`` and ``math.cos`` compile to two calls into the C library, each
with its own argument reduction, that LLVM can neither inline nor overlap
with the kernel's arithmetic; for a 7-joint chain they were about 40 % of a
Jacobian.  :func:`sincos` reduces the angle once, x = k pi/2 + r with
|r| <= pi/4 (Cody and Waite's two-part pi/2, exact for |x| < 1e5), evaluates
the minimax polynomials of fdlibm's ``__kernel_sin`` and ``__kernel_cos`` on
r, and picks the quadrant's signs and order with selects (no branch to
mispredict on random angles).  Its error is at most 1 ulp plus |k| 3.5e-27
(the two-part pi/2's own error, which shows only next to the zeros, e.g.
sin(pi) off by 7e-27); it equals the C library's to the last bit on ~85 % of
random angles and differs by 1 ulp otherwise (``tests/test_compiled_joint.py``).
Angles with |x| >= 1e5 or non-finite go to ``math.sin`` / ``math.cos``.

References
----------
W. J. Cody and W. Waite, *Software Manual for the Elementary Functions*,
Prentice-Hall 1980, ch. 8 (argument reduction by a constant split in parts).
Sun Microsystems, fdlibm 5.3, ``k_sin.c``, ``k_cos.c`` (polynomial
coefficients) and ``e_rem_pio2.c`` (``pio2_1``, ``pio2_1t``).
"""

from __future__ import annotations

import math

from composedyn.dynamics.compiled.jit import njit

_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
_PIO2_1, _PIO2_1T = 1.57079632673412561417e+00, 6.07710050650619224932e-11  # pi/2 = first 33 bits + tail
_INVPIO2 = 6.36619772367581382433e-01
REDUCED = 1e5  # |x| below this: the two-part reduction; above (or inf, NaN): the C library


@njit(cache=True, inline="always")
def sincos(x):
    """(sin x, cos x), within 1 ulp."""
    if not abs(x) < REDUCED:
        return math.sin(x), math.cos(x)
    k = math.floor(x * _INVPIO2 + 0.5)
    r = (x - k * _PIO2_1) - k * _PIO2_1T  # k * _PIO2_1 is exact (33 + 17 bits)
    z = r * r
    s = r + z * r * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6))))))
    m = int(k)  # quadrant: sin x = (s, c, -s, -c)[m % 4], cos x = (c, -s, -c, s)[m % 4]
    odd = (m & 1) == 1
    return (1.0 - (m & 2)) * (c if odd else s), (1.0 - ((m + 1) & 2)) * (s if odd else c)

"""The symbolic derivation's joint model: the only symbolic code that asks a joint's type.

Same kinematics as :mod:`composedyn.dynamics.compiled.joint`, on the entries of a
:class:`~composedyn.dynamics.symbolic.chain.Chain` (``Chain.jtype`` holds the codes of
:mod:`composedyn.dynamics.joint_types`) in the polynomial ring of a
:class:`~composedyn.dynamics.symbolic.ring.TrigRing`:

* :func:`angles` -- which coordinates enter through (sin q, cos q) (angles) and which as q itself;
* :func:`joint_motion` -- the joint's own motion in the joint frame, (J, shift) with
  x_joint = J x_body + shift: revolute Rot(a, q) and 0, prismatic the identity and q a;
* :func:`joint_subspace` -- the velocity (w, v) per unit joint rate of a point x of a body the
  joint moves, all in one frame where the axis is u through o: revolute (u, u x (x - o)),
  prismatic (0, u).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from composedyn.dynamics.joint_types import PRISMATIC, angular
from composedyn.dynamics.symbolic.ring import TrigRing, cross, scale, sub

if TYPE_CHECKING:
    from composedyn.dynamics.symbolic.chain import Chain


def angles(chain: Chain) -> list[bool]:
    """(n,) True where joint i's coordinate is an angle (the ring holds its sine and cosine)."""
    return [bool(x) for x in angular(chain.jtype)]


def _rotation(rg: TrigRing, a, i: int):
    """Rodrigues rotation by q_i about unit axis a (ring 3-vector): c I + s [a]x + (1 - c) a a^T."""
    s, c = rg.joint(i)
    one = rg.R.one
    K = ((0, -a[2], a[1]), (a[2], 0, -a[0]), (-a[1], a[0], 0))
    return tuple(tuple(c * (r == k) + s * K[r][k] + (one - c) * a[r] * a[k] for k in range(3)) for r in range(3))


def joint_motion(rg: TrigRing, chain: Chain, i: int, a):
    """(J 3x3, shift 3-vector) of the chain's joint i with unit axis a (ring 3-vector, joint frame):
    x_joint = J x_body + shift."""
    zero = rg.R.zero
    if chain.jtype[i] == PRISMATIC:
        one = rg.R.one
        eye = tuple(tuple(one if r == k else zero for k in range(3)) for r in range(3))
        return eye, scale(rg.joint(i), a)
    return _rotation(rg, a, i), (zero,) * 3


def joint_subspace(rg: TrigRing, chain: Chain, i: int, u, o, x):
    """(w, v): angular velocity and velocity of the point x per unit rate of the chain's joint i,
    whose unit axis is u through the point o (ring 3-vectors in one frame)."""
    if chain.jtype[i] == PRISMATIC:
        return (rg.R.zero,) * 3, u
    return u, cross(u, sub(x, o))

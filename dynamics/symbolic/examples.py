"""The two-link arm of Giacaglia & Lamas, section 3, as symbolic input.

Geometry of the paper's eqs. (3.1)-(3.2): link 1 (OA) has length 2 L1 and its
centre of mass C1 at its middle; C2 lies at distance L2 from joint A on link 2.
Plane (e1 horizontal, e2 up), gravity -g e2, moments of inertia I1, I2 about
the centres of mass, normal to the plane.  Generalised coordinates: the
absolute angles θ1, θ2 of the links with the horizontal, so the joint angles
are q1 = θ1, q2 = θ2 − θ1.  Actions (3.7): torques N1 e3 on link 1 and N2 e3
on link 2, each acting on its own link only.
"""

from __future__ import annotations

import sympy as sp

from composedyn.dynamics.symbolic.dh import chain_from_dh


def paper_two_link(joint_motor: bool = False) -> dict:
    """Inputs for :func:`~composedyn.dynamics.symbolic.equations` and the symbols used.

    Returns a dict with ``chain``, ``coordinates`` (q as functions of θ),
    ``generalized`` (θ1, θ2), ``wrenches`` (link index -> (F, N)) and
    ``symbols`` (name -> Symbol).  ``joint_motor=True`` models N2 as a motor
    at joint A instead: link 1 then also receives the reaction −N2 e3.
    """
    L1, L2, m1, m2, I1, I2, g = sp.symbols("L1 L2 m1 m2 I1 I2 g", positive=True)
    N1, N2 = sp.symbols("N1 N2", real=True)
    th1, th2 = sp.symbols("theta1 theta2", real=True)
    rows = [  # standard DH: frame i at the far end of link i, x along the link
        dict(a=2 * L1, alpha=0, d=0, theta=0, mass=m1, com=[-L1, 0, 0], inertia=sp.diag(0, 0, I1)),
        dict(a=2 * L2, alpha=0, d=0, theta=0, mass=m2, com=[-L2, 0, 0], inertia=sp.diag(0, 0, I2)),
    ]
    chain = chain_from_dh(rows, name="giacaglia_lamas_two_link", gravity=(0, -g, 0))
    zero = (0, 0, 0)
    wrenches = {0: (zero, (0, 0, N1 - N2 if joint_motor else N1)), 1: (zero, (0, 0, N2))}
    names = dict(L1=L1, L2=L2, m1=m1, m2=m2, I1=I1, I2=I2, g=g, N1=N1, N2=N2, theta1=th1, theta2=th2)
    return dict(chain=chain, coordinates=[th1, th2 - th1], generalized=[th1, th2], wrenches=wrenches, symbols=names)

"""Symbolic kinematic trees: the input of the symbolic derivation.

A :class:`Chain` mirrors the compiled numeric ``Model`` (same body order,
``parent[i] < i``, body frame = joint frame) but every entry is a SymPy
expression, so link parameters may be numbers or symbols.  Body ``i``'s pose
relative to its parent body frame is ``tree[i] @ T_joint(q_i)``, where the
joint moves along ``axis[i]`` given in the joint frame as its type says
(:mod:`.joint`, the symbolic joint model).  Inertial data are in the body frame, the inertia
about the centre of mass.

Two builders: :func:`chain_from_model` (numeric robots, optionally with the
parameters replaced by symbols) and :func:`chain_from_dh` (DH rows whose
entries may be SymPy expressions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import sympy as sp

from composedyn.dynamics.model import ancestors

PARAMETER_KINDS = ("mass", "com", "inertia", "length", "gravity", "armature")


@dataclass(frozen=True)
class Chain:
    """A fixed-base kinematic tree with SymPy entries (n bodies).

    Attributes: ``name``; ``joint_names``, ``body_names`` (n,); ``jtype`` (n,)
    joint type codes (:mod:`composedyn.dynamics.joint_types`); ``parent`` (n,) int (-1 = base); ``tree`` (n,)
    4x4 Matrix parent body frame -> joint frame at q = 0; ``axis`` (n,) 3x1 unit
    Matrix in the joint frame; ``mass`` (n,); ``com`` (n,) 3x1 in the body frame;
    ``inertia`` (n,) 3x3 about the centre of mass in body axes; ``armature``
    (n,); ``gravity`` 3x1 in the base frame (m/s^2); ``values``: symbol ->
    numeric value for the parameters that replaced numbers.
    """

    name: str
    joint_names: tuple
    body_names: tuple
    jtype: tuple
    parent: tuple
    tree: tuple
    axis: tuple
    mass: tuple
    com: tuple
    inertia: tuple
    armature: tuple
    gravity: sp.Matrix
    values: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.joint_names)

    def ancestors(self, i: int) -> list[int]:
        """Body i and its ancestors, from i up to the root's child."""
        return ancestors(self.parent, i)

    def free_symbols(self) -> set:
        """Every symbol in the chain's data."""
        out = set(self.gravity.free_symbols)
        for seq in (self.tree, self.axis, self.mass, self.com, self.inertia, self.armature):
            for x in seq:
                out |= sp.sympify(x).free_symbols
        return out


def exact(x: float, tol: float = 1e-12) -> sp.Expr:
    """A float as an exact SymPy rational.

    Integers within ``tol`` are snapped; a fraction with denominator <= 10**6
    within ``tol`` (relative) is preferred (0.041666666666666664 -> 1/24,
    -0.0029999999999999654 from a merged fixed joint -> -3/1000);
    otherwise the float's decimal representation is used (0.4318 -> 2159/5000).
    """
    x = float(x)
    if abs(x - round(x)) < tol:
        return sp.Integer(int(round(x)))
    f = Fraction(x).limit_denominator(10**6)
    if abs(float(f) - x) <= tol * abs(x):
        return sp.Rational(f.numerator, f.denominator)
    return sp.Rational(repr(x))


def _kinds(parameters) -> set:
    if parameters in (None, False):
        return set()
    if parameters is True or parameters == "all":
        return set(PARAMETER_KINDS)
    kinds = {parameters} if isinstance(parameters, str) else set(parameters)
    bad = kinds - set(PARAMETER_KINDS)
    if bad:
        raise ValueError(f"unknown parameter kinds {sorted(bad)}; choose from {PARAMETER_KINDS}")
    return kinds


class _Params:
    """Replace nonzero numbers by named symbols for the requested kinds."""

    def __init__(self, kinds: set):
        self.kinds, self.values = kinds, {}

    def __call__(self, kind: str, name: str, x: float) -> sp.Expr:
        e = exact(x)
        if kind not in self.kinds or e == 0:
            return e
        s = sp.Symbol(name, real=True)
        self.values[s] = float(x)
        return s


def chain_from_model(model, parameters=None) -> Chain:
    """A :class:`Chain` from a compiled numeric ``Model``.

    ``parameters``: None (all numbers), True / "all", or a subset of
    ``PARAMETER_KINDS``; each nonzero numeric value of those kinds becomes a
    real symbol (``m1``, ``c1x``, ``I1xx``, ``I1xy``, ``r2x`` for joint-origin
    offsets, ``g`` for the gravity magnitude, ``Ia1``).  Values that are exactly
    zero stay zero, so the structure of the robot is kept.  Every moving joint
    is a coordinate here; mimic constraints are applied by ``equations``.
    """
    P = _Params(_kinds(parameters))
    xyz = "xyz"
    tree, axis, mass, com, inertia, arm = [], [], [], [], [], []
    for i in range(model.n):
        k = i + 1
        T = sp.eye(4)
        T[:3, :3] = sp.Matrix(3, 3, [exact(v) for v in model.tree_R[i].ravel()])
        T[:3, 3] = sp.Matrix([P("length", f"r{k}{xyz[j]}", model.tree_p[i, j]) for j in range(3)])
        tree.append(T)
        axis.append(sp.Matrix([exact(v) for v in model.axis[i]]))
        mass.append(P("mass", f"m{k}", model.mass[i]))
        com.append(sp.Matrix([P("com", f"c{k}{xyz[j]}", model.com[i, j]) for j in range(3)]))
        I = sp.zeros(3, 3)
        for a in range(3):
            for b in range(a, 3):
                I[a, b] = I[b, a] = P("inertia", f"I{k}{xyz[a]}{xyz[b]}", model.inertia_com[i, a, b])
        inertia.append(I)
        arm.append(P("armature", f"Ia{k}", model.armature[i]))
    gvec = np.asarray(model.gravity, float)
    gnorm = float(np.linalg.norm(gvec))
    if "gravity" in P.kinds and gnorm > 0:
        gs = P("gravity", "g", gnorm)
        gravity = sp.Matrix([exact(v / gnorm) * gs for v in gvec])
    else:
        gravity = sp.Matrix([exact(v) for v in gvec])
    return Chain(
        name=model.name, joint_names=tuple(model.joint_names), body_names=tuple(model.body_names),
        jtype=tuple(int(t) for t in model.jtype),
        parent=tuple(int(p) for p in model.parent), tree=tuple(tree), axis=tuple(axis),
        mass=tuple(mass), com=tuple(com), inertia=tuple(inertia), armature=tuple(arm),
        gravity=gravity, values=P.values,
    )

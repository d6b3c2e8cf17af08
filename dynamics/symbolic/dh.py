"""Symbolic chains from Denavit-Hartenberg rows whose entries may be SymPy expressions.

Row keys follow the numeric DH importer: ``a``, ``alpha``, ``d``, ``theta``
(joint offset), ``joint`` ("revolute" | "prismatic"), ``mass``, ``com`` (3,),
``inertia`` (3x3 about the centre of mass), optional ``armature``.  Inertial
data are given in link frame i: for the *standard* convention that frame sits
at the distal end of link i (``T_i = Rz(theta_i + q_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``),
for the *modified* (Craig) convention at its proximal joint
(``T_i = Rx(alpha_i) Tx(a_i) Rz(theta_i + q_i) Tz(d_i)``, the row holding
alpha_{i-1}, a_{i-1}).  For a prismatic joint q_i adds to d_i instead.
"""

from __future__ import annotations

from typing import Sequence

import sympy as sp

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.joint_types import KIND_CODES
from composedyn.dynamics.symbolic.chain import Chain, exact

DH_KINDS = ("revolute", "prismatic")  # the joint kinds a DH row names (the first is the default)


def _rz(t) -> sp.Matrix:
    c, s = sp.cos(t), sp.sin(t)
    return sp.Matrix([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def _rx(t) -> sp.Matrix:
    c, s = sp.cos(t), sp.sin(t)
    return sp.Matrix([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def _tr(x=0, y=0, z=0) -> sp.Matrix:
    T = sp.eye(4)
    T[:3, 3] = sp.Matrix([x, y, z])
    return T


def _exact(x, angle: bool = False) -> sp.Expr:
    """Numbers made exact (angles near a multiple of pi/2 snapped to it); expressions kept."""
    e = sp.sympify(x)
    if e.free_symbols or not e.is_number:
        return e
    if angle:
        k = float(e) / (float(sp.pi) / 2)
        if abs(k - round(k)) < 1e-9:
            return sp.Integer(round(k)) * sp.pi / 2
    return exact(float(e))


def _row(rows_src: str, k: int, row: dict) -> dict:
    if not isinstance(row, dict):
        raise ModelError(f"{rows_src}: DH row {k} is not a mapping")
    unknown = set(row) - {"a", "alpha", "d", "theta", "joint", "mass", "com", "inertia", "armature",
                          "limits", "damping", "friction", "name", "joint_name"}
    if unknown:
        raise ModelError(f"{rows_src}: DH row {k} has unknown keys {sorted(unknown)}")
    jt = row.get("joint", DH_KINDS[0])
    if jt not in DH_KINDS:
        raise ModelError(f"{rows_src}: DH row {k} joint type {jt!r} is not handled by the symbolic path "
                         f"({' or '.join(DH_KINDS)})")
    try:
        out = {key: _exact(row.get(key, 0), angle=key in ("alpha", "theta"))
               for key in ("a", "alpha", "d", "theta", "mass", "armature")}
        out["com"] = sp.Matrix(3, 1, [_exact(v) for v in row.get("com", (0, 0, 0))])
        I = sp.Matrix(row.get("inertia", sp.zeros(3, 3)))
        if I.shape in ((3, 1), (1, 3)):  # principal moments [Ixx, Iyy, Izz]
            I = sp.diag(*I)
        I = I.applyfunc(_exact)
    except (sp.SympifyError, TypeError, ValueError) as e:
        raise ModelError(f"{rows_src}: DH row {k} has an entry that is not a number or expression: {e}") from None
    if I.shape != (3, 3) or out["com"].shape != (3, 1):
        raise ModelError(f"{rows_src}: DH row {k} needs com (3,) and inertia (3, 3)")
    out["inertia"], out["joint"] = I, KIND_CODES[jt]
    return out


def chain_from_dh(rows: Sequence[dict], convention: str = "standard", name: str = "dh_robot",
                  gravity=(0, 0, -sp.Rational(981, 100))) -> Chain:
    """A serial :class:`Chain` from DH rows (entries numbers or SymPy expressions).

    Body i's frame is the frame of joint i (z along the joint axis); the fixed
    part of the DH transform after the joint motion becomes the next body's
    tree transform.  ``gravity`` (3,) in the base frame may hold symbols.
    """
    if convention not in ("standard", "modified"):
        raise ModelError(f"{name}: DH convention must be 'standard' or 'modified', got {convention!r}")
    if not rows:
        raise ModelError(f"{name}: empty DH table")
    tree, post, parsed = [], [], [_row(name, k + 1, r) for k, r in enumerate(rows)]
    prev = sp.eye(4)
    for r in parsed:
        if convention == "standard":
            tree.append(prev)
            # link frame i relative to the body frame: Rz(theta) Tz(d) Tx(a) Rx(alpha)
            X = _rz(r["theta"]) * _tr(z=r["d"]) * _tr(x=r["a"]) * _rx(r["alpha"])
        else:
            tree.append(prev * _rx(r["alpha"]) * _tr(x=r["a"]) * _rz(r["theta"]) * _tr(z=r["d"]))
            X = sp.eye(4)
        post.append(X)
        prev = X
    n = len(parsed)
    com, inertia = [], []
    for r, X in zip(parsed, post):
        R, p = X[:3, :3], X[:3, 3]
        com.append(sp.simplify(p + R * r["com"]))
        inertia.append((R * r["inertia"] * R.T).applyfunc(sp.simplify))
    return Chain(
        name=name, joint_names=tuple(f"joint{i + 1}" for i in range(n)),
        body_names=tuple(f"link{i + 1}" for i in range(n)),
        jtype=tuple(r["joint"] for r in parsed), parent=tuple(range(-1, n - 1)),
        tree=tuple(T.applyfunc(sp.simplify) for T in tree), axis=tuple(sp.Matrix([0, 0, 1]) for _ in range(n)),
        mass=tuple(r["mass"] for r in parsed), com=tuple(com), inertia=tuple(inertia),
        armature=tuple(r["armature"] for r in parsed),
        gravity=sp.Matrix(3, 1, [_exact(v) for v in gravity]),
    )

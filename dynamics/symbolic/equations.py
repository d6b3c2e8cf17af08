"""``equations(system, ...)``: closed-form M(q), C(q, q̇), g(q), τ and the
Christoffel brackets of a robot, derived through the composed vectors.

The equations of motion, paper eq. (2.24), are
``Σ_α a_γα q̈_α + Σ_αβ [αβ, γ] q̇_α q̇_β = Q_γ``; in robot form
``τ = M(q) q̈ + C(q, q̇) q̇ + g(q)`` with ``M = (a_γα)`` (+ armature on the
diagonal), ``C_γα = Σ_β [αβ, γ] q̇_β`` (Christoffel form, Ṁ − 2C skew) and
``g = −Q`` of gravity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from composedyn.dynamics.symbolic.composed import Derivation, derive, world_vectors
from composedyn.dynamics.symbolic.inputs import as_chain, check_clash, coordinate_symbols, link_index, mimic_coordinates
from composedyn.dynamics.symbolic.simplify import compact, resolve


@dataclass
class Equations:
    """Symbolic equations of motion of an n-coordinate system.

    Attributes: ``q``, ``qd``, ``qdd`` (n,) symbols of the coordinates and
    their rates; ``M`` (n x n), ``C`` (n x n, Christoffel form), ``g`` (n x 1),
    ``tau`` = M qdd + C qd + g (n x 1); ``brackets`` (n, n, n) ``sympy.Array``
    with ``brackets[α, β, γ] = [αβ, γ]``; ``Q`` (n x 1) the paper's generalised
    forces (gravity plus applied link wrenches); ``parameters`` symbol ->
    numeric value for symbols that replaced the robot's numbers; ``joint_q``
    the joint coordinates as functions of ``q`` (identity unless a coordinate
    map was given).  ``eom()`` gives the equations as ``sympy.Eq``.
    """

    q: tuple
    qd: tuple
    qdd: tuple
    M: sp.Matrix
    C: sp.Matrix
    g: sp.Matrix
    brackets: sp.Array
    Q: sp.Matrix
    parameters: dict = field(default_factory=dict)
    joint_q: tuple = ()
    name: str = "robot"
    derivation: Derivation | None = None
    vectors: dict | None = None

    def composed_vectors(self) -> dict:
        """The composed vectors in world axes: {"vw": [6N x 1] (n,), "PL": (n,), "XY": [[...]] (n x n)}."""
        if self.vectors is None:
            if self.derivation is None:
                raise ValueError("no derivation attached to these equations")
            vw, PL, XY = world_vectors(self.derivation)
            self.vectors = {"vw": vw, "PL": PL, "XY": XY}
        return self.vectors

    @property
    def n(self) -> int:
        return len(self.q)

    @property
    def tau(self) -> sp.Matrix:
        """Inverse dynamics τ = M q̈ + C q̇ + g (n x 1)."""
        return self.M * sp.Matrix(self.qdd) + self.C * sp.Matrix(self.qd) + self.g

    def bracket_matrix(self, gamma: int) -> sp.Matrix:
        """Christoffel brackets of coordinate ``gamma`` (0-based) as a symmetric n x n
        ``sympy.Matrix``: entry (α, β) is [αβ, γ]; C[γ, :] = q̇ᵀ of it."""
        return sp.Matrix(self.n, self.n, lambda a, b: self.brackets[a, b, gamma])

    def eom(self) -> list:
        """Paper form (2.24): Σ a_γα q̈_α + Σ [αβ,γ] q̇_α q̇_β = Q_γ, one ``sympy.Eq`` per γ."""
        n, B = self.n, self.brackets
        out = []
        for k in range(n):
            lhs = [self.M[k, a] * self.qdd[a] for a in range(n)]
            lhs += [(1 if a == b else 2) * B[a, b, k] * self.qd[a] * self.qd[b]
                    for a in range(n) for b in range(a, n)]
            out.append(sp.Eq(sp.Add(*lhs), self.Q[k]))
        return out

    def numeric(self, values: dict | None = None) -> "Equations":
        """A copy with parameter symbols replaced by numbers (default: the robot's own values)."""
        vals = dict(self.parameters if values is None else values)

        def s(x):
            return x.xreplace(vals)

        return Equations(self.q, self.qd, self.qdd, s(self.M), s(self.C), s(self.g), s(self.brackets),
                         s(self.Q), {}, self.joint_q, self.name, None)

    def functions(self, **kw):
        """Batched NumPy functions; see :func:`composedyn.dynamics.symbolic.codegen.numpy_functions`."""
        from composedyn.dynamics.symbolic.codegen import numpy_functions

        return numpy_functions(self, **kw)

    def c_code(self, prefix: str | None = None) -> str:
        """C source of M, C, g, tau; see :func:`composedyn.dynamics.symbolic.codegen.c_source`."""
        from composedyn.dynamics.symbolic.codegen import c_source

        return c_source(self, prefix=prefix)

    def latex(self) -> str:
        from composedyn.dynamics.symbolic.printing import to_latex

        return to_latex(self)

    def pretty(self) -> str:
        from composedyn.dynamics.symbolic.printing import to_text

        return to_text(self)


def equations(system, parameters=None, coordinates=None, generalized=None, point=None,
              wrenches=None, simplify: bool | str = "auto", convention: str = "standard") -> Equations:
    """Symbolic equations of motion through the composed vectors.

    Parameters
    ----------
    system : Robot, Model, networkx.DiGraph, Chain, or list of DH row dicts
        (entries may be SymPy expressions; ``convention`` "standard" | "modified").
    parameters : None, True / "all", or subset of
        ("mass", "com", "inertia", "length", "gravity", "armature"): nonzero numbers of
        those kinds become symbols (``m1``, ``c2x``, ``I3zz``, ``r2x``, ``g``, ``Ia1``).
    coordinates : sequence of n expressions giving joint coordinate q_j as a function
        of the user's ``generalized`` symbols (k <= n), e.g. absolute angles
        ``[th1, th2 - th1]``; the equations are then in those coordinates.  Mimic
        joints (dependent, as in ``Robot``) are handled this way automatically:
        the coordinates are the independent joints, named after their joint index.
    point : optional mapping generalized symbol -> value where the coordinate map's
        Jacobian must be regular (checked; ValueError if singular).
    wrenches : optional mapping link index (0-based) or body name -> (F, N), 3-vectors
        in world axes (may hold symbols), force at the centre of mass; they enter Q.
    simplify : "auto" / True (trigonometric simplification per entry up to 3 coordinates,
        canonical polynomial normal form above), "trig" (always), False / "none" (never).

    Returns
    -------
    Equations
    """
    chain, mimic = as_chain(system, parameters, convention)
    if mimic is not None:  # dependent mimic joints: a linear coordinate map q_full = G q_ind + b
        if coordinates is not None:
            raise ValueError(f"{chain.name}: a coordinate map cannot be combined with mimic joints; "
                             "give the map for every joint on a robot built with mimic='independent'")
        coordinates, generalized = mimic_coordinates(mimic)
    n = chain.n
    jq, jqd, jqdd = coordinate_symbols(None, n)
    names = {s.name for s in (*jq, *jqd, *jqdd)}
    check_clash(chain, jq, jqd, jqdd)
    d = derive(chain, jq)
    rg = d.rg
    if coordinates is None:
        if generalized is not None:
            raise ValueError("generalized symbols given without a coordinate map")
        M = sp.Matrix(n, n, lambda a, b: rg.to_expr(d.M[a][b]))
        B = [[[rg.to_expr(d.B[a][b][c]) for c in range(n)] for b in range(n)] for a in range(n)]
        G = sp.Matrix([rg.to_expr(x) for x in d.G])
        Qw = _wrench_forces(d, wrenches)
        q, qd, qdd, joint_q, vectors = jq, jqd, jqdd, jq, None
    else:
        from composedyn.dynamics.symbolic.coords import transform

        q, qd, qdd = coordinate_symbols(generalized, n)
        if {s.name for s in q} & names - {s.name for s in jq}:
            raise ValueError(f"generalized coordinate names {[s.name for s in q]} clash with rate names")
        check_clash(chain, q, qd, qdd)
        M, B, G, Qw, joint_q, vectors = transform(d, coordinates, q, point, wrenches)
    k = len(q)
    simplify = resolve(simplify, k)
    M = M.applyfunc(lambda e: compact(e, simplify))
    Bs = sp.Array([[[compact(B[a][b][c], simplify) for c in range(k)] for b in range(k)] for a in range(k)])
    G = G.applyfunc(lambda e: compact(e, simplify))
    Qw = Qw.applyfunc(lambda e: compact(e, simplify))
    C = sp.Matrix(k, k, lambda ga, al: sp.Add(*[Bs[al, be, ga] * qd[be] for be in range(k)]))
    return Equations(q=q, qd=qd, qdd=qdd, M=M, C=C, g=-G, brackets=Bs, Q=G + Qw,
                     parameters=dict(chain.values), joint_q=tuple(joint_q), name=chain.name, derivation=d,
                     vectors=vectors)


def _wrench_forces(d: Derivation, wrenches, vw=None) -> sp.Matrix:
    """Q_γ = Σ_i F_i ∘ v_γi + N_i ∘ ω_γi of applied link wrenches (world axes), n x 1."""
    n = d.chain.n
    if not wrenches:
        return sp.zeros(n, 1)
    vw = vw if vw is not None else world_vectors(d)[0]
    Q = sp.zeros(n, 1)
    for key, (F, N) in wrenches.items():
        i = link_index(d.chain, key)
        FN = sp.Matrix([*sp.Matrix(F), *sp.Matrix(N)])
        if FN.shape != (6, 1):
            raise ValueError(f"wrench on link {key!r} must be (F (3,), N (3,))")
        for ga in range(n):
            Q[ga] += (FN.T * vw[ga][6 * i:6 * i + 6, :])[0, 0]
    return Q

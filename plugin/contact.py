"""Contact inverse dynamics of a floating-base robot: the joint torques and contact
wrenches that realise a given base-and-joint motion.

With the generalised forces ``b = inverse_dynamics(q, v, a)`` (nv,) of the motion
and the world-axes frame Jacobians ``J_c`` of the contact frames (rows 3 linear
for a point contact, 6 for a surface contact), the unknowns are the joint
torques ``tau`` (n,) and the contact wrenches ``f_c`` (world axes; point: force
at the frame origin; surface: force and moment about the frame origin) with

    b = Sᵀ tau + Σ_c J_cᵀ f_c,        S = [0 | I_n]  (no base actuation).

The first ``nb`` rows (6 for a free flyer, 3 for a planar base) hold no torque:
``A f = b_base`` with ``A = [J_c[:, :nb]ᵀ ...]`` -- the Newton-Euler equations of
the whole robot, which the contact wrenches alone must meet.  The joint rows
then give ``tau = b_joints - Σ_c J_c[:, nb:]ᵀ f_c`` exactly.

* ``friction_coefficient=None``: the least-norm wrenches ``f = A⁺ b_base``
  (pseudo-inverse, batched); no unilateral or friction constraint, so a wrench
  may pull on the ground.  Infeasible when ``A f ≠ b_base`` (the contacts cannot
  produce the base wrench, e.g. in flight unless falling freely).
* ``friction_coefficient=mu``: a convex program (cvxpy, Clarabel) with, for each
  contact, the Coulomb cone ``‖(I - n nᵀ) f‖ <= mu nᵀ f`` on its force (which
  implies the unilateral ``nᵀ f >= 0``), ``n`` the ground normal (world z by
  default).  Objective ``"forces"``: least squares of the wrenches (forces in
  N and moments in N m added as numbers); ``"torques"``: least squares of the
  joint torques plus 1e-6 times that of the wrenches (so the solution is
  unique).  Without cones the ``"torques"`` objective is solved in closed form.
  When the cones admit no solution, the wrenches closest to meeting the base
  rows within the cones are returned (``feasible`` False, ``residual`` > 0).

Limits of the surface model: the cone constrains the force part only; the
moment is free (no centre-of-pressure bound from a foot size, no torsional
friction), so a surface contact can realise any moment.  Contact kinematics are
not checked: the stance frames are assumed not to slide or lift off.

A result is never forced: ``feasible`` is False and ``residual`` = ``‖A f -
b_base‖`` (N, N m) reports how far the best wrenches are from realising the
motion, and ``tau`` / ``forces`` are those of the best wrenches.  A solution is
feasible when the residual is within ``tolerance`` times
``max(m ‖g‖, ‖b_base‖)``, and with cones when no cone is exceeded by more than
that.

References
----------
P. M. Wensing, D. E. Orin, "Improved computation of the humanoid centroidal
dynamics and application for whole-body control", IJHR 13(1), 2016, eq. (3)
(the floating-base equation with contact wrenches and its unactuated rows).
L. Righetti, J. Buchli, M. Mistry, M. Kalakrishnan, S. Schaal, "Optimal
distribution of contact forces with inverse-dynamics control", IJRR 32(3),
2013, sec. 3 (least-squares contact force and torque objectives).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from composedyn.checks import joint_array

KINDS = {"point": 3, "surface": 6}
OBJECTIVES = ("forces", "torques")
TOLERANCE = 1e-6
OK, INFEASIBLE, CONES = "ok", "infeasible", "outside friction cones"
_REG = 1e-6  # weight of the wrenches in the "torques" objective


@dataclass(frozen=True)
class ContactResult:
    """Contact inverse dynamics of one motion sample (or a batch: leading axes ``...``).

    tau : (..., n) joint torques (N m or N), in ``robot.joint_names`` order.
    forces : frame -> (..., 3) force (point contact) or (..., 6) force and moment
        about the frame origin (surface contact), world axes, on the robot.
    feasible : bool, or (...) bool array: the wrenches realise the motion (and lie in the cones).
    residual : float or (...) array: ‖A f - b_base‖ of the base rows (N, N m).
    status : "ok", "infeasible" (no contact wrenches meet the base rows) or
        "outside friction cones" (only wrenches outside the cones do); str or (...) array.
    """

    tau: np.ndarray
    forces: dict
    feasible: bool | np.ndarray
    residual: float | np.ndarray
    status: str | np.ndarray


def parse_contacts(robot, contacts) -> dict:
    """``contacts`` as an ordered dict frame -> "point" | "surface"; ValueError for an unknown
    frame or kind, a repeated frame, or something that is neither a sequence nor a mapping."""
    if isinstance(contacts, str):
        contacts = [contacts]
    if isinstance(contacts, Mapping):
        items = list(contacts.items())
    elif isinstance(contacts, (Sequence, set, frozenset, np.ndarray)):
        items = [(c, "point") for c in contacts]
    else:
        raise ValueError("contacts must be a sequence of frame names or a mapping frame -> 'point' | 'surface', "
                         f"got {type(contacts).__name__}")
    out: dict = {}
    for frame, kind in items:
        robot._frame(frame)  # ValueError naming close frames
        if kind not in KINDS:
            raise ValueError(f"{robot.name}: contact {frame!r}: kind must be 'point' or 'surface', got {kind!r}")
        if frame in out:
            raise ValueError(f"{robot.name}: contact frame {frame!r} given twice")
        out[frame] = kind
    return out


def _normals(contacts: dict, normal) -> dict:
    """Unit ground normal (3,) per contact frame (world axes): one vector for all, or a mapping."""
    def unit(what: str, x) -> np.ndarray:
        x = joint_array(what, x, 3, "(nx, ny, nz) in world axes")
        if x.shape != (3,) or not np.linalg.norm(x) > 1e-9:
            raise ValueError(f"{what} must be one nonzero 3-vector (world axes), got {x.tolist()}")
        return x / np.linalg.norm(x)

    if isinstance(normal, Mapping):
        extra = set(normal) - set(contacts)
        if extra:
            raise ValueError(f"normal names frame(s) that are not contacts: {', '.join(sorted(map(str, extra)))}")
        return {f: unit(f"normal[{f!r}]", normal.get(f, (0.0, 0.0, 1.0))) for f in contacts}
    n = unit("normal", normal)
    return {f: n for f in contacts}


def contact_inverse_dynamics(robot, q, v, a, contacts, friction_coefficient: float | None = None, *,
                             normal=(0.0, 0.0, 1.0), objective: str = "forces", friction: bool = True,
                             tolerance: float = TOLERANCE) -> ContactResult:
    """Joint torques and contact wrenches realising the motion (q, v, a) of a floating robot.

    Parameters
    ----------
    robot : FloatingRobot
    q, v, a : arrays (..., nq), (..., nv), (..., nv)
        Free-flyer configuration, velocity and acceleration (see :class:`FloatingRobot`).
    contacts : sequence of frame names (point contacts) or mapping frame -> "point" | "surface"
    friction_coefficient : float, optional
        mu > 0: Coulomb cones (convex program); None: least-norm wrenches, unconstrained.
    normal : (3,) or mapping frame -> (3,)
        Ground normal(s), world axes (default world z).
    objective : "forces" or "torques"
        Least squares of the contact wrenches or of the joint torques (module docstring).
    friction : bool
        Include joint friction of the description in the inverse dynamics.
    tolerance : float
        Relative tolerance of the feasibility tests.

    Returns
    -------
    ContactResult
        ``b = Sᵀ tau + Σ J_cᵀ f_c`` holds in the joint rows exactly and in the base
        rows up to ``residual``.
    """
    if not getattr(robot, "floating", False):
        raise ValueError(f"{robot.name}: contact inverse dynamics needs a floating base (cd.load(..., floating=True))")
    contacts = parse_contacts(robot, contacts)
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be 'forces' or 'torques', got {objective!r}")
    mu = None if friction_coefficient is None else _coefficient(friction_coefficient)
    normals = _normals(contacts, normal)
    q, v, a = robot._state(q, v, a)
    nb = robot.base.nv
    b = robot.inverse_dynamics(q, v, a, friction=friction)
    JT = [np.swapaxes(robot.jacobian(q, f, "world")[..., :KINDS[k], :], -1, -2) for f, k in contacts.items()]
    JT = np.concatenate(JT, -1) if JT else np.zeros(b.shape + (0,))
    A, B = JT[..., :nb, :], JT[..., nb:, :]  # (..., nb, k), (..., n, k)
    scale = robot.mass * max(float(np.linalg.norm(robot.base.gravity)), 1.0)
    shape = b.shape[:-1]
    f = np.zeros(shape + (A.shape[-1],))
    status = np.full(shape, OK, dtype=object)
    for idx in np.ndindex(shape) if (mu is not None or objective == "torques") else ():
        f[idx], status[idx] = _solve(A[idx], b[idx][:nb], B[idx], b[idx][nb:], contacts, normals, mu, objective,
                                     scale, tolerance)
    if mu is None and objective == "forces":
        f = np.einsum("...ij,...j->...i", np.linalg.pinv(A, rcond=1e-12), b[..., :nb]) if A.shape[-1] else f
    residual = np.linalg.norm(np.einsum("...ij,...j->...i", A, f) - b[..., :nb], axis=-1)
    bad = residual > tolerance * np.maximum(scale, np.linalg.norm(b[..., :nb], axis=-1))
    status = np.where(bad & (status == OK), INFEASIBLE, status)
    tau = b[..., nb:] - np.einsum("...ij,...j->...i", B, f)
    forces, k = {}, 0
    for frame, kind in contacts.items():
        forces[frame] = f[..., k:k + KINDS[kind]]
        k += KINDS[kind]
    feasible = status == OK
    if not shape:
        return ContactResult(tau, forces, bool(feasible), float(residual), str(status[()]))
    return ContactResult(tau, forces, feasible, residual, status)


def _coefficient(mu) -> float:
    try:
        x = float(mu)
    except (TypeError, ValueError):
        x = float("nan")
    if not 0 < x < np.inf or isinstance(mu, bool):
        raise ValueError(f"friction_coefficient must be a positive finite number (or None), got {mu!r}")
    return x


def _solve(A, b, B, bj, contacts: dict, normals: dict, mu, objective: str, scale: float, tol: float):
    """Wrenches (k,) and status of one sample: cones (mu given) and/or the torque objective."""
    k = A.shape[1]
    pinv = np.linalg.pinv(A, rcond=1e-12) if k else np.zeros((0, len(b)))
    f0 = pinv @ b
    if np.linalg.norm(A @ f0 - b) > tol * max(scale, np.linalg.norm(b)):
        return f0, INFEASIBLE  # no wrenches at all meet the base rows
    if mu is None:  # "torques" objective, equality only: f = f0 + N z, min ‖bj - B f‖
        _, s, Vt = np.linalg.svd(A)
        N = Vt[int(np.sum(s > 1e-12 * max(s.max(initial=0.0), 1.0))):].T
        z = np.linalg.lstsq(B @ N, bj - B @ f0, rcond=None)[0] if N.shape[1] else np.zeros(0)
        return f0 + N @ z, OK
    problem = _program(tuple(contacts.items()), tuple(tuple(n) for n in normals.values()), A.shape[0], B.shape[0],
                       mu, objective)
    exact, closest = problem
    params = exact.param_dict
    params["A"].value, params["b"].value = A, b / scale
    if objective == "torques":
        params["B"].value, params["bj"].value = B, bj / scale
    f = _run(exact)
    if f is None:  # no wrenches in the cones meet the base rows: the closest ones
        closest.param_dict["A"].value, closest.param_dict["b"].value = A, b / scale
        f = _run(closest)
        return (np.zeros(k) if f is None else f * scale), CONES
    f = f * scale
    f = f + pinv @ (b - A @ f)  # remove the solver's residual in the base rows (~1e-9)
    worst = _cone_excess(f, contacts, normals, mu)
    return f, (OK if worst <= tol * max(scale, np.linalg.norm(b)) else CONES)


def _run(problem):
    """Solve with Clarabel; the variable's value, or None when infeasible."""
    import cvxpy as cp

    try:
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    except cp.error.SolverError:
        return None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None
    return np.array(problem.variables()[0].value, dtype=float)


def _cone_excess(f: np.ndarray, contacts: dict, normals: dict, mu: float) -> float:
    """max over contacts of ‖f_t‖ - mu f_n (N); <= 0 inside every cone."""
    worst, k = -np.inf, 0
    for frame, kind in contacts.items():
        force, n = f[k:k + 3], normals[frame]
        fn = force @ n
        worst = max(worst, float(np.linalg.norm(force - fn * n) - mu * fn))
        k += KINDS[kind]
    return worst


@lru_cache(maxsize=64)
def _program(contacts: tuple, normals: tuple, nb: int, n: int, mu: float, objective: str):
    """(exact, closest) cvxpy problems for one contact set, built once (parameters A, b, B, bj;
    forces scaled by the robot's weight): exact meets A f = b within the cones; closest
    minimises ‖A f - b‖² within the cones."""
    import cvxpy as cp

    k = sum(KINDS[kind] for _, kind in contacts)
    f, g = cp.Variable(k, name="f"), cp.Variable(k, name="f")
    A, b, A2, b2 = (cp.Parameter(s, name=nm) for s, nm in (((nb, k), "A"), (nb, "b"), ((nb, k), "A"), (nb, "b")))
    if objective == "torques":
        B, bj = cp.Parameter((n, k), name="B"), cp.Parameter(n, name="bj")
        cost = cp.sum_squares(bj - B @ f) + _REG * cp.sum_squares(f)
    else:
        cost = cp.sum_squares(f)
    exact = cp.Problem(cp.Minimize(cost), [A @ f == b] + _cones(f, contacts, normals, mu))
    closest = cp.Problem(cp.Minimize(cp.sum_squares(A2 @ g - b2) + 1e-9 * cp.sum_squares(g)),
                         _cones(g, contacts, normals, mu))
    return exact, closest


def _cones(f, contacts: tuple, normals: tuple, mu: float) -> list:
    """Second-order cones ‖T f_c‖ <= mu nᵀ f_c on the force part of every contact (T: tangent basis)."""
    import cvxpy as cp

    out, j = [], 0
    for (_, kind), nrm in zip(contacts, normals):
        nrm = np.asarray(nrm)
        T = np.linalg.svd(nrm[None, :])[2][1:]  # (2, 3): orthonormal, orthogonal to n
        out.append(cp.SOC(mu * (nrm @ f[j:j + 3]), T @ f[j:j + 3]))
        j += KINDS[kind]
    return out

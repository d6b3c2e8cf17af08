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

Limits of the surface model: the cone constrains the force part only, and the
moment is free unless ``foot=(half_length, half_width)`` is given (with a
friction coefficient): then the centre of pressure must lie in the rectangle
``|x| <= half_length``, ``|y| <= half_width`` of the frame's own x, y axes
about its origin (the frame's z axis being the sole's normal), i.e. with the
wrench in frame axes ``|m_x| <= half_width f_z`` and ``|m_y| <= half_length
f_z``.  There is no torsional friction bound.  Contact kinematics are not
checked: the stance frames are assumed not to slide or lift off.

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

import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

import numpy as np

from composedyn.checks import joint_array
from composedyn.dynamics.extras import require
from composedyn.dynamics.reference.frames import unknown_frame

KINDS = {"point": 3, "surface": 6}
OBJECTIVES = ("forces", "torques")
TOLERANCE = 1e-6
OK, INFEASIBLE, CONES = "ok", "infeasible", "outside friction cones"
_REG = 1e-6  # weight of the wrenches in the "torques" objective
_LOCK = threading.Lock()  # the cached programs' parameters are set, then solved: one sample at a time


@dataclass(frozen=True)
class ContactResult:
    """Contact inverse dynamics of one motion sample (or a batch: leading axes ``...``).

    tau : (..., nv - root) generalised forces of the joints after the root (N m or N): one per joint in
        ``robot.joint_names`` order, a joint of several coordinates (a ball joint) one per coordinate.
    forces : frame -> (..., 3) force (point contact) or (..., 6) force and moment
        about the frame origin (surface contact), world axes, on the robot.
    feasible : bool, or (...) bool array: the wrenches realise the motion (and lie in the cones).
    residual : float or (...) array: ‖A f - b_base‖ of the base rows (N, N m).
    status : "ok", "infeasible" (no contact wrenches meet the base rows) or
        "outside friction cones" (only wrenches outside the cones, or with a centre of
        pressure outside a ``foot``, do); str or (...) array.
    """

    tau: np.ndarray
    forces: dict
    feasible: bool | np.ndarray
    residual: float | np.ndarray
    status: str | np.ndarray


def check_frame(robot, frame) -> str:
    """``frame`` when it is one of ``robot.frame_names``; else ValueError naming the robot and the closest
    frame names."""
    if isinstance(frame, str) and frame in robot.frame_names:
        return frame
    raise unknown_frame(robot.name, frame, robot.frame_names)


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
        check_frame(robot, frame)
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
                             foot=None, tolerance: float = TOLERANCE) -> ContactResult:
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
    foot : (half_length, half_width) or mapping frame -> (half_length, half_width), optional
        Sole rectangles of surface contacts (m, frame x and y axes): centre-of-pressure
        bounds; needs ``friction_coefficient``.
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
    if not (isinstance(tolerance, (int, float, np.integer, np.floating)) and 0.0 < tolerance < np.inf):
        raise ValueError(f"tolerance must be a number > 0 (relative to the robot's weight), got {tolerance!r}")
    mu = None if friction_coefficient is None else _coefficient(friction_coefficient)
    if mu is not None:
        _cvxpy()  # the extra is needed whatever the state, not only when the cones bind
    normals = _normals(contacts, normal)
    feet = _feet(contacts, foot, mu)
    q, v, a = robot.check_state(q, v, a)
    nb = robot.joints[0].nv  # the root joint's (a floating base's) velocity coordinates
    b = robot.inverse_dynamics(q, v, a, friction=friction)
    JT = [np.swapaxes(robot.jacobian(q, f, "world")[..., :KINDS[k], :], -1, -2) for f, k in contacts.items()]
    JT = np.concatenate(JT, -1) if JT else np.zeros(b.shape + (0,))
    A, B = JT[..., :nb, :], JT[..., nb:, :]  # (..., nb, k), (..., n, k)
    gravity = robot.base.gravity if hasattr(robot, "base") else robot.array_model.gravity  # a TreeRobot's
    scale = robot.mass * max(float(np.linalg.norm(gravity)), 1.0)
    shape = b.shape[:-1]
    f = np.zeros(shape + (A.shape[-1],))
    status = np.full(shape, OK, dtype=object)
    rots = {fr: robot.frame_pose(q, fr)[..., :3, :3] for fr in feet}
    setup = _Setup(tuple(contacts.items()), tuple(tuple(n) for n in normals.values()), tuple(feet.items()), mu,
                   objective)
    for idx in np.ndindex(shape) if (mu is not None or objective == "torques") else ():
        f[idx], status[idx] = _solve(A[idx], b[idx][:nb], B[idx], b[idx][nb:], setup,
                                     {fr: R[idx] for fr, R in rots.items()}, scale, tolerance)
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


@dataclass(frozen=True)
class _Setup:
    """What the convex program of a contact set depends on (hashable: one program per setup)."""

    contacts: tuple  # ((frame, kind), ...)
    normals: tuple  # ((nx, ny, nz), ...) per contact
    feet: tuple  # ((frame, (half_length, half_width)), ...) surface contacts with a sole rectangle
    mu: float | None
    objective: str


def _feet(contacts: dict, foot, mu) -> dict:
    """frame -> (half_length, half_width) for the surface contacts given a sole rectangle."""
    if foot is None:
        return {}
    if mu is None:
        raise ValueError("foot (centre-of-pressure bounds) needs a friction_coefficient")
    surfaces = [f for f, k in contacts.items() if k == "surface"]
    if isinstance(foot, Mapping):
        extra = [f for f in foot if f not in surfaces]
        if extra:
            raise ValueError(f"foot names frame(s) that are not surface contacts: {', '.join(map(str, extra))}")
        items = foot.items()
    else:
        items = [(f, foot) for f in surfaces]
    out = {}
    for frame, size in items:
        size = joint_array(f"foot[{frame!r}]", size, 2, "(half_length, half_width) in m")
        if size.shape != (2,) or not (size > 0).all():
            raise ValueError(f"foot of {frame!r} must be (half_length, half_width) > 0 in m, got {size.tolist()}")
        out[frame] = (float(size[0]), float(size[1]))
    return out


def _solve(A, b, B, bj, setup: _Setup, rots: dict, scale: float, tol: float):
    """Wrenches (k,) and status of one sample: cones (mu given) and/or the torque objective;
    ``rots``: frame -> world rotation (3, 3) of the contacts with a foot."""
    k = A.shape[1]
    pinv = np.linalg.pinv(A, rcond=1e-12) if k else np.zeros((0, len(b)))
    f0 = pinv @ b
    if np.linalg.norm(A @ f0 - b) > tol * max(scale, np.linalg.norm(b)):
        return f0, INFEASIBLE  # no wrenches at all meet the base rows
    if k == 0:  # no contact (a flight phase): nothing to choose, no cone to meet
        return f0, OK
    if setup.mu is None:  # "torques" objective, equality only: f = f0 + N z, min ‖bj - B f‖
        _, s, Vt = np.linalg.svd(A)
        N = Vt[int(np.sum(s > 1e-12 * max(s.max(initial=0.0), 1.0))):].T
        z = np.linalg.lstsq(B @ N, bj - B @ f0, rcond=None)[0] if N.shape[1] else np.zeros(0)
        return f0 + N @ z, OK
    values = {"A": A, "b": b / scale, "B": B, "bj": bj / scale} | {f"Rt:{fr}": R.T for fr, R in rots.items()}
    with _LOCK:
        exact, closest = _program(setup, A.shape[0], B.shape[0])
        for problem in (exact, closest):
            for name, p in problem.param_dict.items():
                p.value = values[name]
        f = _run(exact)
        if f is None:  # no wrenches in the cones meet the base rows: the closest ones
            f = _run(closest)
            return (np.zeros(k) if f is None else f * scale), CONES
    f = f * scale
    f = f + pinv @ (b - A @ f)  # remove the solver's residual in the base rows (~1e-9)
    worst = _cone_excess(f, setup, rots)
    return f, (OK if worst <= tol * max(scale, np.linalg.norm(b)) else CONES)


def _cvxpy():
    """cvxpy, with the Clarabel solver the cones are solved with (MissingExtra naming ``[contact]``)."""
    require("clarabel", "contact wrenches within friction cones", "contact")
    return require("cvxpy", "contact wrenches within friction cones", "contact")


def _run(problem):
    """Solve with Clarabel; the variable's value, or None when infeasible."""
    cp = _cvxpy()

    try:
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    except cp.error.SolverError:
        return None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return None
    return np.array(problem.variables()[0].value, dtype=float)


def _cone_excess(f: np.ndarray, setup: _Setup, rots: dict) -> float:
    """Largest violation (N, N m) of the contact constraints: ‖f_t‖ - mu f_n per contact, and
    |m_x| - half_width f_z, |m_y| - half_length f_z (frame axes) per foot; <= 0 when all hold."""
    worst, k, feet = -np.inf, 0, dict(setup.feet)
    for (frame, kind), n in zip(setup.contacts, setup.normals):
        force, n = f[k:k + 3], np.asarray(n)
        fn = force @ n
        worst = max(worst, float(np.linalg.norm(force - fn * n) - setup.mu * fn))
        if frame in feet:
            hx, hy = feet[frame]
            fl, ml = rots[frame].T @ force, rots[frame].T @ f[k + 3:k + 6]
            worst = max(worst, abs(ml[0]) - hy * fl[2], abs(ml[1]) - hx * fl[2])
        k += KINDS[kind]
    return worst


@lru_cache(maxsize=64)
def _program(setup: _Setup, nb: int, n: int):
    """(exact, closest) cvxpy problems of a setup, built once (parameters A, b, B, bj and the
    transposed rotations "Rt:<frame>" of the feet; forces scaled by the robot's weight): exact
    meets A f = b within the contact constraints; closest minimises ‖A f - b‖² within them."""
    cp = _cvxpy()

    k = sum(KINDS[kind] for _, kind in setup.contacts)
    f, g = cp.Variable(k, name="f"), cp.Variable(k, name="f")
    A, b, A2, b2 = (cp.Parameter(s, name=nm) for s, nm in (((nb, k), "A"), (nb, "b"), ((nb, k), "A"), (nb, "b")))
    if setup.objective == "torques":
        B, bj = cp.Parameter((n, k), name="B"), cp.Parameter(n, name="bj")
        cost = cp.sum_squares(bj - B @ f) + _REG * cp.sum_squares(f)
    else:
        cost = cp.sum_squares(f)
    exact = cp.Problem(cp.Minimize(cost), [A @ f == b] + _constraints(f, setup))
    closest = cp.Problem(cp.Minimize(cp.sum_squares(A2 @ g - b2) + 1e-9 * cp.sum_squares(g)),
                         _constraints(g, setup))
    return exact, closest


def _constraints(f, setup: _Setup) -> list:
    """Second-order cones ‖T f_c‖ <= mu nᵀ f_c on the force part of every contact (T: tangent
    basis), and the centre-of-pressure bounds of the feet (parameter Rt = frame rotationᵀ)."""
    cp = _cvxpy()

    out, j, feet = [], 0, dict(setup.feet)
    for (frame, kind), nrm in zip(setup.contacts, setup.normals):
        nrm = np.asarray(nrm)
        T = np.linalg.svd(nrm[None, :])[2][1:]  # (2, 3): orthonormal, orthogonal to n
        force = f[j:j + 3]
        out.append(cp.SOC(setup.mu * (nrm @ force), T @ force))
        if frame in feet:
            hx, hy = feet[frame]
            Rt = cp.Parameter((3, 3), name=f"Rt:{frame}")
            fz, m = Rt[2] @ force, f[j + 3:j + 6]
            out += [cp.abs(Rt[0] @ m) <= hy * fz, cp.abs(Rt[1] @ m) <= hx * fz]
        j += KINDS[kind]
    return out

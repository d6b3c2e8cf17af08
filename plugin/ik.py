"""Inverse kinematics of one frame: damped least squares (Levenberg-Marquardt) on SE(3)
within the joint limits, with random restarts.

The solver itself is :func:`composedyn.dynamics.compiled.ik.solve` (one compiled
call for the whole solve) or, under the NumPy backend,
:func:`composedyn.dynamics.reference.ik.solve`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.dynamics import dispatch
from composedyn.task_space import frame_id


@dataclass(frozen=True)
class IKResult:
    """Result of :func:`inverse_kinematics`.

    q (dof,), (nq,) for joints of several coordinates: the solution (or the best configuration found); success: both
    errors within tolerance; iterations: pose/Jacobian evaluations over all
    starts; error: (position error m, rotation error rad) at q (rotation 0
    with ``position_only``).
    """

    q: np.ndarray
    success: bool
    iterations: int
    error: tuple


def target_transform(target, position_only: bool, who: str = "inverse_kinematics: target") -> np.ndarray:
    """A task target as a 4x4 rigid transform, world <- target (``position_only``: a 3-vector position
    is taken too); ValueError beginning with ``who`` when it is not numeric, not of that shape, not
    finite, or not rigid (a rotation block with R^T R = I and det R = 1, a last row (0, 0, 0, 1)):
    a transposed transform would otherwise put its translation in the ignored last row."""
    alt = " or a 3-vector" if position_only else ""
    try:
        t = np.asarray(target, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{who} must be a numeric 4x4 transform{alt}, "
                         f"got {type(target).__name__} {repr(target)[:40]}") from None
    if not (t.shape == (4, 4) or (position_only and t.shape == (3,))):
        raise ValueError(f"{who} must be a 4x4 transform{alt}, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{who} contains NaN or infinite values")
    T = np.eye(4)
    if t.shape == (3,):
        T[:3, 3] = t
        return T
    R = t[:3, :3]
    if not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
        raise ValueError(f"{who}: the rotation block is not a rotation matrix (R^T R != I or det < 0)")
    if not np.allclose(t[3], (0.0, 0.0, 0.0, 1.0), rtol=0.0, atol=1e-12):
        raise ValueError(f"{who}: the last row is {t[3].tolist()}, not (0, 0, 0, 1): not a rigid transform "
                         "(a transposed one?)")
    return t.copy()


def random_configurations(robot, count: int, rng: np.random.Generator) -> np.ndarray:
    """(count, dof) uniform within the joint limits (+-pi, or +-1 m for prismatic, where absent)."""
    lim = robot.limits
    lo, hi = lim["lower"], lim["upper"]
    lo, hi = np.where(np.isfinite(lo), lo, -np.pi), np.where(np.isfinite(hi), hi, np.pi)
    return rng.uniform(lo, hi, size=(count, robot.dof))


def configuration_moves(robot):
    """(``step(q, dq)``, ``at_limits(q)``) of a robot whose joints have configuration spaces of their own:
    ``integrate(q, dq)``, then each one-coordinate joint clipped to its limits (``robot.limits`` per velocity
    coordinate); (low, high) boolean (nv,) of the one-coordinate joints at their lower / upper limit."""
    one = [j for j in robot.joints if j.nq == 1 and j.nv == 1]
    iq = np.array([j.idx_q for j in one], dtype=int)
    iv = np.array([j.idx_v for j in one], dtype=int)
    lower, upper = robot.limits["lower"][iv], robot.limits["upper"][iv]

    def step(q, dq):
        q = robot.integrate(q, np.broadcast_to(dq, (robot.nv,))) if np.any(dq) else robot.normalize(q)
        q[iq] = np.clip(q[iq], lower, upper)
        return q

    def at_limits(q):
        low, high = np.zeros(robot.nv, dtype=bool), np.zeros(robot.nv, dtype=bool)
        low[iv], high[iv] = q[iq] <= lower, q[iq] >= upper
        return low, high

    return step, at_limits


def inverse_kinematics(robot, frame: str, target, q0=None, position_only: bool = False, tol: float = 1e-9,
                       tol_rotation: float = 1e-9, max_iterations: int = 5000, per_start: int = 60,
                       restarts: int = 100, seed=0) -> IKResult:
    """Joint positions q with frame_pose(q, frame) = target, q within the limits.

    Parameters
    ----------
    frame : str
        One of ``robot.frame_names``.
    target : (4, 4) or, with ``position_only``, (3,)
        World <- frame pose to reach (only its translation when ``position_only``).
    q0 : (dof,), optional
        First start (default: 0 projected onto the limits).
    tol, tol_rotation : float
        Success when |p* - p| <= tol (m) and |log(R* R^T)| <= tol_rotation (rad).
    max_iterations, per_start, restarts : int
        Budget of iterations over all starts, iterations per start, number of
        random restarts (starts drawn from ``numpy.random.default_rng(seed)``;
        ``seed`` may be a Generator).
    """
    # joints with configuration spaces of their own (a TreeRobot, a floating base): q (nq,) moved by integrate
    own_spaces = getattr(robot, "array_model", None) is not None or int(getattr(robot, "nq", robot.dof)) != robot.dof
    if own_spaces:
        robot.frame_pose(robot.neutral(), frame)  # an unknown frame: its named error
    else:
        k = frame_id(robot, frame)
    T = target_transform(target, position_only)
    for name, x in (("tol", tol), ("tol_rotation", tol_rotation)):
        if not (isinstance(x, (int, float)) and 0.0 < x < np.inf):
            raise ValueError(f"inverse_kinematics: {name} must be a positive number, got {x!r}")
    for name, x, least in (("max_iterations", max_iterations, 1), ("per_start", per_start, 1),
                           ("restarts", restarts, 0)):
        if not (isinstance(x, (int, np.integer)) and x >= least):
            raise ValueError(f"inverse_kinematics: {name} must be an integer >= {least}, got {x!r}")
    n = robot.nq if own_spaces else robot.dof
    if q0 is None:
        q0 = robot.neutral() if own_spaces else np.zeros(n)
    (q0,) = joint_arrays(n, q0=q0)
    if q0.shape != (n,):
        raise ValueError(f"q0 must have shape ({n},), got {q0.shape}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    lim = robot.limits
    lower, upper = lim["lower"], lim["upper"]
    rows = 3 if position_only else 6
    if own_spaces:
        from composedyn.dynamics.reference.ik import solve

        starts = robot.random_configuration(size=int(restarts), seed=rng)
        step, at_limits = configuration_moves(robot)
        q, ok, it, ep, er = solve(lambda q: (robot.frame_pose(q, frame), robot.jacobian(q, frame)), T, rows,
                                  lower, upper, robot.normalize(q0), starts, int(per_start), int(max_iterations),
                                  float(tol), float(tol_rotation), step=step, at_limits=at_limits)
        return IKResult(q=q, success=bool(ok), iterations=int(it), error=(float(ep), float(er)))
    starts = random_configurations(robot, int(restarts), rng)
    model = robot.model
    if model.n and dispatch.backend() == "numba":
        from composedyn.dynamics.compiled.ik import solve

        im, fx = robot.arrays.frames
        mm = robot.mimic_map
        G, b = (np.eye(n), np.zeros(n)) if mm is None else (np.array(mm.G, float), np.array(mm.b, float))
        q = np.empty(n)
        ok, it, ep, er = solve(
            im, fx, G, b, 2 * k, T, rows, lower, upper, q0, starts, int(per_start), int(max_iterations),
            float(tol), float(tol_rotation), q)
    else:
        from composedyn.dynamics.reference.ik import solve

        def pose_jacobian(q):
            return robot.frame_pose(q, frame), robot.jacobian(q, frame)

        q, ok, it, ep, er = solve(pose_jacobian, T, rows, lower, upper, q0, starts, int(per_start),
                                  int(max_iterations), float(tol), float(tol_rotation))
    return IKResult(q=q, success=bool(ok), iterations=int(it), error=(float(ep), float(er)))

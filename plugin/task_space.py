"""Task-space quantities of a :class:`composedyn.Robot`: frame poses, Jacobians,
velocities, classical accelerations, centre of mass, task-space inertia.

Argument checks and the mimic reduction live here; the quantities come from
:mod:`composedyn.dynamics.dispatch` (compiled kernels or the NumPy reference
:mod:`composedyn.dynamics.reference.frames`).  Frames are the links of the description
(``robot.frame_names``), links merged by fixed joints included.  Jacobian rows
and twists are linear first; ``reference="world"`` is the frame origin's
velocity in world axes (Pinocchio LOCAL_WORLD_ALIGNED), ``"local"`` the same
in the frame's axes (LOCAL).  With dependent mimic joints q_all = G q + b, so
the Jacobian with respect to the coordinates is J_all G.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.dynamics import dispatch
from composedyn.dynamics.reference.frames import frame_index

_ND, _F64 = np.ndarray, np.dtype(np.float64)
_REFERENCES = {"world": 0, "local": 1}


def frame_id(robot, frame) -> int:
    """Index of ``frame`` in ``robot.frame_names``; one-line ValueError with close names."""
    return _frame(robot, frame)[0]


def _frame(robot, frame) -> tuple:
    """(index k, body, T (4, 4) in the body frame) of ``frame``, cached per robot."""
    cache = robot.__dict__.setdefault("_frame_ids", {})
    f = cache.get(frame) if frame.__class__ is str else None
    if f is None:
        if not isinstance(frame, str):
            raise ValueError(f"frame must be a link name (str), got {type(frame).__name__}")
        k = frame_index(robot.model, frame)
        f = cache[frame] = (k, int(robot.model.link_body[k]), np.array(robot.model.link_T[k], dtype=float))
    return f


def _lean(robot) -> tuple:
    """(im, fm, (n,)) when single samples may go straight to the compiled kernels (numba
    backend, no dependent mimic joints, moving joints), else (); cached per robot and backend."""
    backend = dispatch._state.get("resolved") or dispatch.backend()
    cached = robot.__dict__.get("_task_lean")
    if cached is None or cached[0] != backend:
        ok = backend == "numba" and robot._mimic is None and robot.model.n > 0
        lean = (*dispatch.packed(robot.model), (robot.model.n,)) if ok else ()
        cached = robot.__dict__["_task_lean"] = (backend, lean)
    return cached[1]


def _vector(x, shape) -> bool:
    """x is a float64 ndarray of this shape (the kernels check finiteness)."""
    return x.__class__ is _ND and x.dtype is _F64 and x.shape == shape


def _kernel(name: str):
    return dispatch._kernels.get(name) or dispatch._kernel(name)


def local_flag(reference) -> int:
    """0 for "world", 1 for "local"; ValueError otherwise."""
    flag = _REFERENCES.get(reference) if isinstance(reference, str) else None
    if flag is None:
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return flag


def _columns(robot, J: np.ndarray) -> np.ndarray:
    """All-joint Jacobian (..., r, n_all) -> coordinates (..., r, dof): J G."""
    mm = robot._mimic
    return J if mm is None else J @ mm.G


def frame_pose(robot, q, frame) -> np.ndarray:
    """World <- frame homogeneous transform (..., 4, 4)."""
    k, body, T = _frame(robot, frame)
    if (lean := _lean(robot)) and _vector(q, lean[2]):
        out = np.empty((4, 4))
        if _kernel("pose_one")(lean[0], lean[1], q, body, T, out) == 0:
            return out
    (q,) = joint_arrays(robot.dof, q=q)
    return dispatch.frame_pose(robot.model, robot._expand(q)[0], k)


def jacobian(robot, q, frame, reference: str = "world") -> np.ndarray:
    """Frame Jacobian (..., 6, dof), linear rows first."""
    (k, body, T), local = _frame(robot, frame), local_flag(reference)
    if (lean := _lean(robot)) and _vector(q, lean[2]):
        out = np.empty((6, q.shape[0]))
        if _kernel("jacobian_one")(lean[0], lean[1], q, body, T, local, out) == 0:
            return out
    (q,) = joint_arrays(robot.dof, q=q)
    return _columns(robot, dispatch.jacobian(robot.model, robot._expand(q)[0], k, local))


def frame_velocity(robot, q, qd, frame, reference: str = "world") -> np.ndarray:
    """Frame twist (..., 6): origin velocity then angular velocity."""
    (k, body, T), local = _frame(robot, frame), local_flag(reference)
    if (lean := _lean(robot)) and _vector(q, lean[2]) and _vector(qd, lean[2]):
        out = np.empty(6)
        if _kernel("velocity_one")(lean[0], lean[1], q, qd, body, T, local, out) == 0:
            return out
    q, qd = joint_arrays(robot.dof, q=q, qd=qd)
    return dispatch.frame_velocity(robot.model, *robot._expand(q, qd), k, local)


def frame_acceleration(robot, q, qd, qdd, frame, reference: str = "world") -> np.ndarray:
    """Classical acceleration (..., 6) of the frame origin and angular acceleration."""
    (k, body, T), local = _frame(robot, frame), local_flag(reference)
    if (lean := _lean(robot)) and _vector(q, lean[2]) and _vector(qd, lean[2]) and _vector(qdd, lean[2]):
        out = np.empty(6)
        if _kernel("acceleration_one")(lean[0], lean[1], q, qd, qdd, body, T, local, out) == 0:
            return out
    q, qd, qdd = joint_arrays(robot.dof, q=q, qd=qd, qdd=qdd)
    return dispatch.frame_acceleration(robot.model, *robot._expand(q, qd, qdd), k, local)


def center_of_mass(robot, q) -> np.ndarray:
    """Centre of mass of the moving bodies (..., 3), world coordinates."""
    (q,) = joint_arrays(robot.dof, q=q)
    return dispatch.center_of_mass(robot.model, robot._expand(q)[0])


def com_jacobian(robot, q) -> np.ndarray:
    """d com / dq (..., 3, dof)."""
    (q,) = joint_arrays(robot.dof, q=q)
    return _columns(robot, dispatch.com_jacobian(robot.model, robot._expand(q)[0]))


def task_inertia(robot, q, frame, reference: str = "world", translational: bool = False,
                 damping: float = 0.0) -> np.ndarray:
    """Lambda = (J M^-1 J^T)^-1 (..., 6, 6) or translational (..., 3, 3); see
    :func:`composedyn.dynamics.reference.task_inertia.task_inertia`."""
    return inertia_of(jacobian(robot, q, frame, reference), robot.mass_matrix(q), frame, translational, damping)


def inertia_of(J: np.ndarray, M: np.ndarray, frame: str, translational: bool, damping) -> np.ndarray:
    """Lambda from a frame Jacobian J (..., 6, nv) and the mass matrix M (..., nv, nv); ``damping``
    checked (a number >= 0)."""
    from composedyn.dynamics.reference.task_inertia import task_inertia as _lambda

    try:
        lam = float(damping)
    except (TypeError, ValueError):
        lam = float("nan")
    if not lam >= 0.0:
        raise ValueError(f"damping must be a number >= 0, got {damping!r}")
    return _lambda(J[..., :3, :] if translational else J, M, frame, lam)

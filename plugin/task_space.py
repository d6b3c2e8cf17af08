"""Task-space quantities of a :class:`composedyn.Robot`: frame poses, Jacobians,
velocities, classical accelerations, centre of mass, task-space inertia.

The general path of the ``Robot`` methods: argument checks, broadcasting and
the mimic reduction live here; the quantities come from
:mod:`composedyn.dynamics.dispatch` (compiled kernels or the NumPy reference
:mod:`composedyn.dynamics.reference.frames`).  Plain float64 vectors and a
known frame go first through the checked compiled entries (``Robot._frame_path``).
Frames are the links of the description (``robot.frame_names``), links merged by fixed joints included.  Jacobian rows
and twists are linear first; ``reference="world"`` is the frame origin's
velocity in world axes (Pinocchio LOCAL_WORLD_ALIGNED), ``"local"`` the same
in the frame's axes (LOCAL).  With dependent mimic joints q_all = G q + b, so
the Jacobian with respect to the coordinates is J_all G.
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.dynamics.reference.frames import frame_index

REFERENCES = {"world": 0, "local": 1}  # a frame quantity's reference -> its kernels' ``local`` option


def frame_id(robot, frame) -> int:
    """Index of ``frame`` in ``robot.frame_names`` (a dict look-up, the dict built once per
    robot); one-line ValueError listing close names for an unknown frame."""
    ids = robot.__dict__.get("_frame_ids")
    if ids is None:
        ids = robot.__dict__["_frame_ids"] = {name: k for k, name in enumerate(robot.model.link_names)}
    k = ids.get(frame) if frame.__class__ is str else None
    if k is None:
        if not isinstance(frame, str):
            raise ValueError(f"frame must be a link name (str), got {type(frame).__name__}")
        k = frame_index(robot.model, frame)  # a str subclass, or the ValueError naming close frames
    return k


def local_flag(reference) -> int:
    """0 for "world", 1 for "local"; ValueError otherwise."""
    flag = REFERENCES.get(reference) if isinstance(reference, str) else None
    if flag is None:
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return flag


def _columns(robot, J: np.ndarray) -> np.ndarray:
    """All-joint Jacobian (..., r, n_all) -> coordinates (..., r, dof): J G."""
    mm = robot.mimic_map
    return J if mm is None else J @ mm.G


def frame_pose(robot, q, frame) -> np.ndarray:
    """World <- frame homogeneous transform (..., 4, 4)."""
    k = frame_id(robot, frame)
    (q,) = joint_arrays(robot.dof, q=q)
    return robot.compute("frame_pose", robot.to_all_joints(q)[0], frame=k)


def jacobian(robot, q, frame, reference: str = "world") -> np.ndarray:
    """Frame Jacobian (..., 6, dof), linear rows first."""
    k, local = frame_id(robot, frame), local_flag(reference)
    (q,) = joint_arrays(robot.dof, q=q)
    return _columns(robot, robot.compute("jacobian", robot.to_all_joints(q)[0], frame=k, local=local))


def frame_velocity(robot, q, qd, frame, reference: str = "world") -> np.ndarray:
    """Frame twist (..., 6): origin velocity then angular velocity."""
    k, local = frame_id(robot, frame), local_flag(reference)
    q, qd = joint_arrays(robot.dof, q=q, qd=qd)
    return robot.compute("frame_velocity", *robot.to_all_joints(q, qd), frame=k, local=local)


def frame_acceleration(robot, q, qd, qdd, frame, reference: str = "world") -> np.ndarray:
    """Classical acceleration (..., 6) of the frame origin and angular acceleration."""
    k, local = frame_id(robot, frame), local_flag(reference)
    q, qd, qdd = joint_arrays(robot.dof, q=q, qd=qd, qdd=qdd)
    return robot.compute("frame_acceleration", *robot.to_all_joints(q, qd, qdd), frame=k, local=local)


def center_of_mass(robot, q) -> np.ndarray:
    """Centre of mass of the moving bodies (..., 3), world coordinates."""
    (q,) = joint_arrays(robot.dof, q=q)
    return robot.compute("center_of_mass", robot.to_all_joints(q)[0])


def com_jacobian(robot, q) -> np.ndarray:
    """d com / dq (..., 3, dof)."""
    (q,) = joint_arrays(robot.dof, q=q)
    return _columns(robot, robot.compute("com_jacobian", robot.to_all_joints(q)[0]))


def task_inertia(robot, q, frame, reference: str = "world", translational: bool = False,
                 damping: float = 0.0) -> np.ndarray:
    """Lambda = (J M^-1 J^T)^-1 (..., 6, 6) or translational (..., 3, 3); see
    :func:`composedyn.dynamics.reference.task_inertia.task_inertia`."""
    return inertia_of(robot.jacobian(q, frame, reference), robot.mass_matrix(q), frame, translational, damping)


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


def wrench_forces(robot, q: np.ndarray, f: dict, link_com: dict) -> np.ndarray:
    """The generalised forces (..., nv) of link wrenches: Σ J_cᵀ w over ``f`` (link name -> w (..., 6) =
    (force, moment) in world axes, applied at the link's centre of mass ``link_com[link]`` (3,), link
    frame), J_c the world-axes Jacobian of that point: linear rows J_v - [c - p]× J_ω of the link
    frame's world Jacobian (origin p, :meth:`jacobian`).  For robots whose algorithms take no
    wrenches of their own (the NumPy backend of joints with several coordinates)."""
    out = 0.0
    for link, w in f.items():
        T, J = robot.frame_pose(q, link), robot.jacobian(q, link, "world")
        r = np.einsum("...ij,j->...i", T[..., :3, :3], link_com[link])  # c - p, world axes
        Jv, Jw = J[..., :3, :], J[..., 3:, :]
        # Jcᵀ f = Jvᵀ f + Jωᵀ (r × f): the force's moment about the frame origin
        moment = w[..., 3:] + np.cross(r, np.broadcast_to(w[..., :3], r.shape))
        out = out + np.einsum("...ij,...i->...j", Jv, w[..., :3]) + np.einsum("...ij,...i->...j", Jw, moment)
    return out

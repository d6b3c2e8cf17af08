"""A robot's joints as records, and the configuration space of a fixed-base robot.

``robot.joints`` lists the joint model's records (:class:`composedyn.dynamics.array_api.joints.Joint`:
``name``, ``kind``, ``nq``, ``nv``, ``idx_q``, ``idx_v``, and the axis) of the robot's coordinates
in array order, the floating base first when there is one; dependent mimic joints are not
coordinates and are not listed.

Every coordinate of a fixed-base robot is one revolute, continuous or prismatic joint (nq = nv = 1;
an angle in rad or a displacement in m), so its configuration space is R^n: ``integrate`` is
q + v dt, ``difference`` q1 - q0, ``neutral`` zeros (Pinocchio's conventions for these joints,
except that a continuous joint keeps its angle rather than Pinocchio's (cos, sin) pair).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from composedyn.checks import joint_arrays, random_generator


def joint_records(robot) -> tuple:
    """The joint records of ``robot``'s coordinates (module docstring); sum(nq) = robot.nq, sum(nv) = robot.nv."""
    from composedyn.dynamics.array_api.model import from_robot  # on first use: `import composedyn` stays lean

    return from_robot(robot).coordinate_joints


def several_coordinates(robot) -> list[str]:
    """The joints of ``robot`` with several coordinates below a floating base (``"'name' (kind)"``); empty for
    a robot whose joints have one coordinate each, a floating robot's base aside."""
    if getattr(robot, "array_model", None) is None:
        return []
    below = robot.joints[1:] if getattr(robot, "base", None) is not None else robot.joints
    return [f"{j.name!r} ({j.kind})" for j in below if (j.nq, j.nv) != (1, 1)]


def refuse_several_coordinates(robot, what: str) -> None:
    """ModelError when ``robot`` has joints of several coordinates below a floating base (a ``TreeRobot``):
    ``what`` takes robots whose joints have one coordinate each (joint logs, trajectories of joint angles)."""
    several = several_coordinates(robot)
    if not several:
        return
    from composedyn.dynamics.errors import ModelError

    raise ModelError(f"{what}: robot {robot.name!r} has joints of several coordinates ({', '.join(several[:3])}"
                     f"{', ...' if len(several) > 3 else ''}); it takes robots whose joints have one coordinate each")


def time_step(dt) -> float:
    """``dt`` as a finite number of seconds; ValueError naming it otherwise."""
    try:
        step = float(dt)
    except (TypeError, ValueError, OverflowError):
        step = math.nan
    if not math.isfinite(step):
        raise ValueError(f"integrate: dt must be a finite number of seconds, got {repr(dt)[:40]}")
    return step


def random_joints(lower: np.ndarray, upper: np.ndarray, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    """Joint coordinates (*shape, n) uniform within [lower, upper] (±π where a limit is infinite)."""
    lo, hi = np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper), upper, np.pi)
    return rng.uniform(lo, hi, tuple(shape) + lo.shape)


def sample_shape(size, where: str = "random_configuration") -> tuple:
    """The batch shape of ``size`` (None: one sample; an integer or a tuple of integers >= 0);
    ValueError naming ``size`` and the method ``where`` otherwise."""
    if size is None:
        return ()
    try:
        shape = tuple(operator.index(s) for s in np.atleast_1d(size))
    except (TypeError, ValueError, OverflowError):
        shape = (-1,)
    if any(s < 0 for s in shape) or np.ndim(size) > 1:
        raise ValueError(f"{where}: size must be None, a non-negative integer or a tuple of them, "
                         f"got {repr(size)[:40]}")
    return shape


def random_configuration(robot, size=None, seed: int | None = None) -> np.ndarray:
    """Random configurations (*size, nq) of a fixed-base robot, uniform within its joint limits."""
    limits = robot.limits
    return random_joints(limits["lower"], limits["upper"], sample_shape(size),
                         random_generator(seed, "random_configuration"))


def integrate(robot, q, v, dt: float = 1.0) -> np.ndarray:
    """q + v dt (..., nq) for a fixed-base robot."""
    step = time_step(dt)
    q, v = joint_arrays(robot.dof, q=q, v=v)
    return q + v * step


def difference(robot, q0, q1) -> np.ndarray:
    """q1 - q0 (..., nv) for a fixed-base robot: the velocity with integrate(q0, v) = q1."""
    q0, q1 = joint_arrays(robot.dof, q0=q0, q1=q1)
    return q1 - q0

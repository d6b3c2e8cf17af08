"""A robot's dynamics as a linear function of its parameters: regressor, names, base parameters.

Columns (the layout of ``robot.regressor``): one block of 10 per body of the
compiled model (bodies in joint order, links merged by fixed joints included,
mimic joints' bodies too), ``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
(mx = m cx, ...; inertia about the body's joint frame origin, see
:mod:`composedyn.dynamics.reference.regressor`); with ``joint_terms=True`` then, per
joint of the model (mimic joints included), ``[fv, fc, Ia]`` (viscous,
Coulomb, armature) and with ``offset=True`` a fourth ``off`` (a constant
torque offset).  Names number bodies and joints from 1 in model order:
``Izz2`` is body 2's Izz, ``fv3`` joint 3's viscous coefficient.

A robot on a tree of joint models (:class:`composedyn.tree_robot.TreeRobot`, and a floating
robot, :class:`composedyn.floating_robot.FloatingRobot`) has the rows of its nv generalised forces
(a floating base's wrench in base axes first) and the columns of its bodies in the same layout: a
floating base's body first (body 1, as Pinocchio's free-flyer joint 1), then the joints' bodies;
joint terms for every joint but a free-flyer or planar one, numbered by their bodies (from 2 after
a floating base); see :meth:`composedyn.tree_robot.TreeRobot.regressor`.
"""

from __future__ import annotations

import operator

import numpy as np

from composedyn.checks import joint_arrays, random_generator
from composedyn.dynamics.reference.base_parameters import BaseParameters, base_parameters
from composedyn.dynamics.reference.regressor import JOINT_TERM_NAMES, PARAM_NAMES, joint_regressor

BASE_SAMPLES = 60  # random states stacked for the base parameters (x dof rows, >> the columns)


def refuse_floating(robot, what: str) -> None:
    """ValueError when ``robot`` has a floating base: ``what`` reads joint logs, which carry no base motion
    (ModelError for joints of several coordinates)."""
    from composedyn.joint_space import refuse_several_coordinates

    refuse_several_coordinates(robot, what)
    if getattr(robot, "floating", False):
        raise ValueError(f"{what}: {robot.name!r} has a floating base and joint logs carry no base motion; "
                         "build the regressor from base-and-joint states with robot.regressor(q, v, a)")


def regressor(robot, q, qd, qdd, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
    """Y (..., dof, P): tau = Y @ parameters (see the module docstring for the columns).

    Without joint terms tau is the inverse dynamics without friction and
    armature; with them, the full ``robot.inverse_dynamics`` (offset 0).
    Dependent mimic joints: G^T Y over the all-joint state (Kolev eq. 2.20).
    """
    q, qd, qdd = joint_arrays(robot.dof, q=q, qd=qd, qdd=qdd)
    q, qd, qdd = robot.to_all_joints(q, qd, qdd)
    Y = robot.compute("regressor", q, qd, qdd)
    if joint_terms:
        Y = np.concatenate([Y, joint_regressor(qd, qdd, offset=offset)], axis=-1)
    if not robot.mimic_joint_names:
        return Y
    return np.einsum("ia,...ip->...ap", robot.mimic_jacobian, Y)


def parameters(robot, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
    """The robot's own parameter vector (P,) in the columns' order (offset 0)."""
    if getattr(robot, "array_model", None) is not None:  # a tree of joint models, a floating robot's included
        return robot.inertial_parameters(joint_terms, offset)
    from composedyn.dynamics.reference.regressor import inertial_parameters, joint_parameters

    pi = inertial_parameters(robot.model)
    return np.concatenate([pi, joint_parameters(robot.model, offset)]) if joint_terms else pi


def parameter_names(robot, joint_terms: bool = False, offset: bool = False) -> tuple:
    """Names (P,) of a ``Robot``'s columns, e.g. ``("m1", "mx1", ..., "Izz7", "fv1", "fc1", "Ia1", ...)``."""
    bodies = robot.model.n
    out = [f"{p}{i + 1}" for i in range(bodies) for p in PARAM_NAMES]
    if joint_terms:
        k = 4 if offset else 3
        out += [f"{p}{j + 1}" for j in range(bodies) for p in JOINT_TERM_NAMES[:k]]
    return tuple(out)


def random_states(robot, count: int, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q (count, nq), qd, qdd (count, nv): q uniform within position limits (+-pi where absent;
    a floating robot's ``random_configuration``), qd and qdd standard normal (rad/s, rad/s^2);
    qd never zero (keeps Coulomb columns informative)."""
    rng = random_generator(seed, "base_parameters")
    if getattr(robot, "array_model", None) is not None:  # joints of several coordinates, a floating base's
        return robot.random_configuration(size=count, seed=seed), *rng.normal(size=(2, count, robot.nv))
    lim = robot.limits
    lo = np.where(np.isfinite(lim["lower"]), lim["lower"], -np.pi)
    hi = np.where(np.isfinite(lim["upper"]), lim["upper"], np.pi)
    q = rng.uniform(lo, hi, (count, robot.dof))
    qd, qdd = rng.normal(size=(2, count, robot.dof))
    return q, qd, qdd


def sample_count(samples) -> int:
    """``samples`` as a positive integer number of random states; ValueError naming it otherwise."""
    try:
        count = operator.index(samples)
    except TypeError:
        count = 0
    if count < 1:
        raise ValueError(f"base_parameters: samples must be a positive integer number of random states, "
                         f"got {repr(samples)[:40]}")
    return count


def cached_base_parameters(robot, joint_terms: bool, offset: bool, samples, seed):
    """:func:`robot_base_parameters`, computed once per robot and set of arguments (a ``seed`` of None:
    every time); what ``robot.base_parameters`` returns."""
    key = (bool(joint_terms), bool(offset), sample_count(samples), seed)
    cache = robot.__dict__.setdefault("_base_parameters", {})
    if key not in cache or seed is None:
        cache[key] = robot_base_parameters(robot, joint_terms=joint_terms, offset=offset, samples=samples, seed=seed)
    return cache[key]


def robot_base_parameters(robot, joint_terms: bool = False, offset: bool = False,
                          samples: int = BASE_SAMPLES, seed: int | None = 0) -> BaseParameters:
    """Base parameters of ``robot`` (Gautier's QR on the regressor at ``samples`` random states)."""
    Y = robot.regressor(*random_states(robot, sample_count(samples), seed), joint_terms=joint_terms, offset=offset)
    return base_parameters(Y.reshape(-1, Y.shape[-1]), robot.parameter_names(joint_terms, offset))

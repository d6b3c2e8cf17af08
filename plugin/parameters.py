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
"""

from __future__ import annotations

import numpy as np

from composedyn.checks import joint_arrays
from composedyn.dynamics.dispatch import regressor as _regressor
from composedyn.dynamics.reference.base_parameters import BaseParameters, base_parameters
from composedyn.dynamics.reference.regressor import JOINT_TERM_NAMES, PARAM_NAMES, joint_regressor

BASE_SAMPLES = 60  # random states stacked for the base parameters (x dof rows, >> the columns)


def regressor(robot, q, qd, qdd, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
    """Y (..., dof, P): tau = Y @ parameters (see the module docstring for the columns).

    Without joint terms tau is the inverse dynamics without friction and
    armature; with them, the full ``robot.inverse_dynamics`` (offset 0).
    Dependent mimic joints: G^T Y over the all-joint state (Kolev eq. 2.20).
    """
    q, qd, qdd = joint_arrays(robot.dof, q=q, qd=qd, qdd=qdd)
    q, qd, qdd = robot._expand(q, qd, qdd)
    Y = _regressor(robot.model, q, qd, qdd)
    if joint_terms:
        Y = np.concatenate([Y, joint_regressor(qd, qdd, offset=offset)], axis=-1)
    if not robot.mimic_joint_names:
        return Y
    return np.einsum("ia,...ip->...ap", robot.mimic_jacobian, Y)


def parameters(robot, joint_terms: bool = False, offset: bool = False) -> np.ndarray:
    """The robot's own parameter vector (P,) in the columns' order (offset 0)."""
    from composedyn.dynamics.reference.regressor import inertial_parameters, joint_parameters

    pi = inertial_parameters(robot.model)
    return np.concatenate([pi, joint_parameters(robot.model, offset)]) if joint_terms else pi


def parameter_names(robot, joint_terms: bool = False, offset: bool = False) -> tuple:
    """Names (P,) of the columns, e.g. ``("m1", "mx1", ..., "Izz7", "fv1", "fc1", "Ia1", ...)``."""
    n = robot.model.n
    out = [f"{p}{i + 1}" for i in range(n) for p in PARAM_NAMES]
    if joint_terms:
        k = 4 if offset else 3
        out += [f"{p}{j + 1}" for j in range(n) for p in JOINT_TERM_NAMES[:k]]
    return tuple(out)


def random_states(robot, count: int, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, qd, qdd (count, dof): q uniform within position limits (+-pi where absent), qd and qdd
    standard normal (rad/s, rad/s^2); qd never zero (keeps Coulomb columns informative)."""
    rng = np.random.default_rng(seed)
    lim = robot.limits
    lo = np.where(np.isfinite(lim["lower"]), lim["lower"], -np.pi)
    hi = np.where(np.isfinite(lim["upper"]), lim["upper"], np.pi)
    q = rng.uniform(lo, hi, (count, robot.dof))
    qd, qdd = rng.normal(size=(2, count, robot.dof))
    return q, qd, qdd


def robot_base_parameters(robot, joint_terms: bool = False, offset: bool = False,
                          samples: int = BASE_SAMPLES, seed: int | None = 0) -> BaseParameters:
    """Base parameters of ``robot`` (Gautier's QR on the regressor at ``samples`` random states)."""
    Y = regressor(robot, *random_states(robot, samples, seed), joint_terms=joint_terms, offset=offset)
    return base_parameters(Y.reshape(-1, Y.shape[-1]), parameter_names(robot, joint_terms, offset))

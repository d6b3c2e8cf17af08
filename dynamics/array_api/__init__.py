"""Dynamics algorithms written once against the Python array API (NumPy, PyTorch, JAX).

``am = from_robot(robot)`` collects a robot's constants once (:mod:`.model`); ``bm = on(am, xp,
device, dtype)`` makes them arrays of one namespace (``array_api_compat.array_namespace(x)``);
every algorithm is a function of ``(bm, ...)`` broadcasting over leading batch axes and equal
to the :class:`composedyn.Robot` method of the same name.  Spatial vectors are linear first in
body frames (:mod:`.spatial`); joints come from :mod:`.joints`.
"""

from composedyn.dynamics.array_api.configuration import difference, integrate, neutral
from composedyn.dynamics.array_api.coriolis import coriolis_matrix
from composedyn.dynamics.array_api.crba import accelerations_and_mass, forward_dynamics, mass_matrix, solve_mass
from composedyn.dynamics.array_api.frames import (
    center_of_mass,
    centroidal_momentum_matrix,
    com_jacobian,
    energy,
    frame_acceleration,
    frame_pose,
    frame_velocity,
    jacobian,
    kinetic_energy,
    potential_energy,
)
from composedyn.dynamics.array_api.model import ArrayModel, BackendModel, from_robot, on
from composedyn.dynamics.array_api.rnea import bias_torques, gravity_torques, inverse_dynamics
from composedyn.dynamics.array_api.torque_regressor import inertial_parameters, regressor

__all__ = [
    "ArrayModel", "BackendModel", "from_robot", "on",
    "inverse_dynamics", "mass_matrix", "forward_dynamics", "accelerations_and_mass", "solve_mass",
    "bias_torques", "gravity_torques", "coriolis_matrix",
    "frame_pose", "jacobian", "frame_velocity", "frame_acceleration", "center_of_mass", "com_jacobian",
    "centroidal_momentum_matrix", "kinetic_energy", "potential_energy", "energy",
    "regressor", "inertial_parameters", "neutral", "integrate", "difference",
]

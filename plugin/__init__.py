"""composedyn: robot dynamics from URDF, xacro, MJCF, SDFormat or DH tables through composed vectors.

    import composedyn as cd
    robot = cd.load("puma560")
    tau = robot.inverse_dynamics(q, qd, qdd)

See the README for a tour, docs/guide/ for the user guide and docs/architecture.md for how the code is organised.
"""

from composedyn.closed_chain import ClosedChain, load_closed_chain
from composedyn.control.computed_torque import ComputedTorqueController
from composedyn.control.lqr import LQRController
from composedyn.control.operational_space import OperationalSpaceController, TaskSpaceModel
from composedyn.dynamics.constraints.loops import LoopClosure
from composedyn.errors import MissingExtra, ModelError, ModelWarning, SimulationError
from composedyn.floating.contact import ContactResult, contact_inverse_dynamics
from composedyn.floating.conventions import convert_floating, convert_floating_forces
from composedyn.floating.legged import LeggedReport
from composedyn.identification.excitation import ExcitationTrajectory, excitation_trajectory
from composedyn.identification.identify import Identification, identify
from composedyn.ik import IKResult
from composedyn.loading import from_dh, from_graph, from_mjcf, from_sdf, from_urdf, load
from composedyn.logs import JointLog, LogWarning, check_many, read_log
from composedyn.protocol import DynamicsModel
from composedyn.robot import Robot
from composedyn.simulation.reference_motion import MinimumJerk
from composedyn.simulation.simulate import Simulation, simulate
from composedyn.torque_check.chunked import check_chunks
from composedyn.torque_check.report import TrajectoryReport
from composedyn.torque_check.trajectory import check_trajectory

__all__ = [
    "ClosedChain",
    "ComputedTorqueController",
    "ContactResult",
    "DynamicsModel",
    "ExcitationTrajectory",
    "IKResult",
    "Identification",
    "JointLog",
    "LQRController",
    "LeggedReport",
    "LogWarning",
    "LoopClosure",
    "MinimumJerk",
    "MissingExtra",
    "ModelError",
    "ModelWarning",
    "OperationalSpaceController",
    "Robot",
    "Simulation",
    "SimulationError",
    "TaskSpaceModel",
    "TrajectoryReport",
    "check_chunks",
    "check_many",
    "check_trajectory",
    "contact_inverse_dynamics",
    "convert_floating",
    "convert_floating_forces",
    "excitation_trajectory",
    "from_dh",
    "from_graph",
    "from_mjcf",
    "from_sdf",
    "from_urdf",
    "identify",
    "load",
    "load_closed_chain",
    "read_log",
    "simulate",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    """Lazy submodules: ``cd.symbolic`` imports SymPy only when first used."""
    if name == "symbolic":
        import importlib

        return importlib.import_module("composedyn.symbolic")
    raise AttributeError(f"module 'composedyn' has no attribute {name!r}")


"""composedyn: robot dynamics from URDF or DH tables through composed vectors.

    import composedyn as cd
    robot = cd.load("puma560")
    tau = robot.inverse_dynamics(q, qd, qdd)

See ARCHITECTURE.md for the public contract.
"""

from composedyn.errors import ModelError, ModelWarning
from composedyn.loading import from_dh, from_graph, from_urdf, load
from composedyn.robot import Robot

__all__ = ["ModelError", "ModelWarning", "Robot", "from_dh", "from_graph", "from_urdf", "load"]
__version__ = "0.1.0"

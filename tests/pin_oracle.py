"""Pinocchio as the tests' oracle: see :mod:`composedyn.testing.pinocchio_oracle`.

A missing oracle is an error (``tests/conftest.py`` stops the test run) unless
``COMPOSEDYN_NO_ORACLE=1`` is set; then the tests that import this module are
skipped, and the summary of the run counts them.  ``pin`` is the ``pinocchio``
module behind a counter of attribute look-ups (also used by ``PinPair``), so
that the summary says how many tests compared against Pinocchio.
"""

import os

import numpy as np

NO_ORACLE = "COMPOSEDYN_NO_ORACLE"

try:
    from composedyn.testing import pinocchio_oracle as _oracle
except ImportError:
    if os.environ.get(NO_ORACLE) != "1":
        raise
    import pytest

    pytest.skip(f"Pinocchio missing and {NO_ORACLE}=1", allow_module_level=True)

from composedyn.testing.pinocchio_oracle import (  # noqa: E402, F401
    ERD_URDFS,
    FreeFlyerPair,
    PinPair,
    erd_robots_dir,
    erd_urdf,
    loop_constraints,
    rel_err,
)


class _Counted:
    """A module whose attribute look-ups (one per call into it) are counted in ``uses``."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "uses", 0)

    def __getattr__(self, name: str):
        object.__setattr__(self, "uses", self.uses + 1)
        return getattr(self._module, name)


pin = _oracle.pin if isinstance(_oracle.pin, _Counted) else _Counted(_oracle.pin)
_oracle.pin = pin  # PinPair's model building counts too


def legged_pair(name: str, robot) -> FreeFlyerPair:
    """Pinocchio's free-flyer model (``JointModelFreeFlyer`` at the root link) of the URDF of
    ``composedyn.testing.pinocchio_trees.FLOATING_URDFS[name]``, the floating ``robot`` loaded from it, and the
    map between their coordinates; the model carries the robot's armature (Pinocchio's RNEA, CRBA and ABA add
    it), read from the robot's tree (``from_robot``)."""
    from composedyn.dynamics.array_api.model import from_robot
    from composedyn.testing.pinocchio_trees import FLOATING_URDFS

    pp = FreeFlyerPair(robot, str(erd_robots_dir() / FLOATING_URDFS[name]), pin.JointModelFreeFlyer())
    assert robot.base.kind == "free" and np.allclose(robot.base.origin, np.eye(4))  # the root link's frame
    pp.model.armature = pp.v(from_robot(robot).armature)
    pp.data = pp.model.createData()
    return pp


def tree_regressor_columns(pp: FreeFlyerPair, am) -> tuple[np.ndarray, np.ndarray]:
    """(columns of the tree ``am``'s regressor, Pinocchio's ``computeJointTorqueRegressor`` columns of the same
    bodies): 10 per body, the tree's root body (the base) as Pinocchio's free flyer (joint 1), every other body
    as the Pinocchio joint of its joint's name."""
    ids = [1] + [int(pp.model.getJointId(j.name)) for j in am.joints[1:]]
    assert len(set(ids)) == len(ids) == pp.model.njoints - 1, ids
    ours = np.concatenate([np.arange(10 * b, 10 * b + 10) for b in range(len(ids))])
    theirs = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in ids])
    return ours, theirs

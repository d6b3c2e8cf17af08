"""The robots the fuzzer calls: bundled fixed-base robots, a robot with a mimic joint and two
floating bases.  ``fast_reference`` is the ``Robot`` whose methods ``robot.fast`` must equal
(all-joint coordinates: mimic joints independent)."""

from __future__ import annotations

import warnings

import composedyn as cd

FIXED = ("panda", "puma560", "stanford", "panda_gripper")
FLOATING = ("puma560_floating", "solo12")
# "@numpy": the same robot with the NumPy reference backend (``robot.fast`` stays compiled, so its
# results are then compared across backends)
ROBOTS = FIXED + FLOATING + ("stanford@numpy", "solo12@numpy")


def _erd(key: str) -> str:
    from composedyn.testing.pinocchio_oracle import erd_urdf

    return erd_urdf(key)


def use_backend(key: str) -> None:
    """Select the backend of ``key`` ("@numpy" suffix: NumPy; otherwise the compiled kernels)."""
    from composedyn.dynamics.dispatch import set_backend

    set_backend("numpy" if key.endswith("@numpy") else "auto")


def load(key: str, mimic: str = "dependent"):
    """The robot named ``key`` (one of ``ROBOTS``; a backend suffix is ignored here)."""
    key = key.partition("@")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if key == "panda_gripper":  # example-robot-data's Panda: the finger joints are a mimic pair
            return cd.from_urdf(_erd("panda"), mimic=mimic)
        if key == "puma560_floating":
            return cd.load("puma560", floating=True)
        if key == "solo12":
            return cd.load(_erd("solo12"), floating=True)
        return cd.load(key)


def fast_reference(key: str, robot):
    """The ``Robot`` in the coordinates of ``robot.fast`` (mimic joints independent)."""
    return load(key, mimic="independent") if robot.mimic_joint_names else robot

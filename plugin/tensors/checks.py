"""Argument checks of the tensor front ends, shared by PyTorch and JAX.

Only shapes and names are checked (both are static, also under ``jax.jit``);
values are not looked at, so that no check moves data off a GPU or stops a trace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from composedyn.dynamics.reference.frames import unknown_frame

REFERENCES = ("world", "local")


@dataclass(frozen=True)
class Layout:
    """What each argument's last axis must hold for one robot, and its frame names.

    ``rates``: the names of the velocity and acceleration arguments (``("qd", "qdd")``
    for a fixed base, ``("v", "a")`` for a floating one, as the robot's methods name them).
    """

    robot: str
    nq: int
    nv: int
    bodies: int
    joint_terms: int  # entries of damping / coulomb / armature: one per joint of all_joint_names
    base_terms: int  # zero entries the model's joint-term vectors hold for the floating base, put in front
    frames: tuple
    rates: tuple
    what_q: str
    what_v: str

    def last_axis(self, name: str, shape: tuple, n: int, what: str) -> None:
        """ValueError unless ``shape`` is (..., n); ``what`` says what n counts."""
        if len(shape) == 0 or shape[-1] != n:
            raise ValueError(f"{name} must have {n} entries in its last axis ({what}), got {tuple(shape)}")

    def q(self, name: str, shape: tuple) -> None:
        self.last_axis(name, shape, self.nq, self.what_q)

    def v(self, name: str, shape: tuple) -> None:
        self.last_axis(name, shape, self.nv, self.what_v)

    def params(self, shape: tuple) -> None:
        what = f"{self.robot}'s inertial parameters: 10 for each of {self.bodies} bodies, the regressor's layout"
        self.last_axis("params", shape, 10 * self.bodies, what)

    def joint_term(self, name: str, shape: tuple) -> None:
        self.last_axis(name, shape, self.joint_terms,
                       f"{self.robot}'s {name} coefficient of each joint coordinate after the base (one per joint "
                       "of all_joint_names, mimic joints included, for one-coordinate joints)")

    def frame(self, frame) -> str:
        """``frame`` if it is one of the robot's frames; ValueError listing close names otherwise."""
        if isinstance(frame, str) and frame in self.frames:
            return frame
        if not isinstance(frame, str):
            raise ValueError(f"frame must be a frame name (str) of {self.robot}, got {type(frame).__name__}")
        raise unknown_frame(self.robot, frame, self.frames)

    @staticmethod
    def reference(reference) -> str:
        if reference not in REFERENCES:
            raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
        return reference


def real_array(name: str, x) -> np.ndarray:
    """A non-tensor argument (NumPy array, list, number) as a real NumPy array; ValueError naming
    ``name`` for anything else (strings, objects, complex values)."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real-valued tensor or array, got {type(x).__name__}"
                         + ("" if arr is None else f" of dtype {arr.dtype}"))
    return arr


def batch_shape(shapes: dict) -> tuple:
    """The broadcast of the batch axes (all but the last) of ``shapes`` (name -> shape);
    ValueError naming every shape when they do not broadcast."""
    out: list = []
    for shape in shapes.values():
        lead = tuple(shape[:-1])
        if len(lead) > len(out):
            out = [1] * (len(lead) - len(out)) + out
        for k, n in enumerate(lead, start=len(out) - len(lead)):
            if out[k] == 1:
                out[k] = n
            elif n not in (1, out[k]):
                listed = ", ".join(f"{key} {tuple(s)}" for key, s in shapes.items())
                raise ValueError(f"batch shapes do not broadcast: {listed}; the leading axes must broadcast together")
    return tuple(out)


def layout(robot, am) -> Layout:
    """The :class:`Layout` of ``robot`` (a Robot, FloatingRobot or TreeRobot) whose array model is ``am``."""
    name = robot.name
    base = am.joints[0] if robot.floating else None  # the free-flyer (planar) joint of a floating base
    nb_q, nb_v = (base.nq, base.nv) if base is not None else (0, 0)
    if base is not None:
        joints = "joints" if am.nq - nb_q == len(am.joints) - 1 == am.nv - nb_v else "joint coordinates"
        what_q = f"{name}'s nq = {nb_q} base + {am.nq - nb_q} {joints}"
        what_v = f"{name}'s nv = {nb_v} base + {am.nv - nb_v} {joints}"
        rates = ("v", "a")
    else:
        what_q, what_v, rates = f"{name}'s nq", f"{name}'s nv", ("qd", "qdd") if am.nq == am.nv else ("v", "a")
    terms = int(am.damping.shape[-1])  # one per velocity coordinate of the model (mimic joints included)
    return Layout(robot=name, nq=int(am.nq), nv=int(am.nv), bodies=int(am.inertia.shape[0]),
                  joint_terms=terms - nb_v, base_terms=nb_v,
                  frames=tuple(robot.frame_names), rates=rates,
                  what_q=what_q, what_v=what_v)

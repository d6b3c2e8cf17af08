"""Compile every kernel a user can reach, in groups, with one progress line per group.

Used when the package is built (:mod:`composedyn.kernels.build`, run by
``setup.py`` on the freshly built package, writing numba's cache into it as
``kernel_cache/``), by ``composedyn warm-up``, and by ``Robot.warm_up`` for its
own kernels.  The kernels take the robot's size at run time, so compiling them
on the bundled robots serves every robot.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from typing import Callable, NamedTuple

import numpy as np

from composedyn.errors import ModelError

# method -> number of (..., n) arguments; frame methods also take the last frame
_DYNAMICS = {"inverse_dynamics": 3, "forward_dynamics": 3, "mass_matrix": 1, "coriolis_matrix": 2,
             "gravity_torques": 1, "bias_torques": 2, "regressor": 3, "inverse_dynamics_derivatives": 3,
             "forward_dynamics_derivatives": 3, "center_of_mass": 1, "com_jacobian": 1}
_FRAMES = {"frame_pose": 1, "jacobian": 1, "frame_velocity": 2, "frame_acceleration": 3}


class Steps:
    """Times groups of work; writes ``composedyn: warm-up k/N <group>: <s> s`` on ``stream`` for a
    group that compiled kernels (one that only loaded cached machine code stays silent; so does
    every group under ``COMPOSEDYN_COMPILE_NOTICE=0``)."""

    def __init__(self, total: int, stream=None):
        self.total, self.done = total, 0
        self.stream = sys.stderr if stream is None else stream
        self.seconds: dict[str, float] = {}

    def run(self, label: str, work: Callable[[], object]):
        from composedyn.dynamics.compiled.cache import compiled_count

        t0, before = time.perf_counter(), compiled_count()
        result = work()
        self.done += 1
        dt = self.seconds[label] = time.perf_counter() - t0
        if compiled_count() > before and os.environ.get("COMPOSEDYN_COMPILE_NOTICE", "1") != "0":
            self.stream.write(f"composedyn: warm-up {self.done}/{self.total} {label}: {dt:.1f} s\n")
            self.stream.flush()
        return result


def exercise(robot, batch: int = 0) -> None:
    """Call every dynamics and task-space method of ``robot`` once on one sample (``batch`` 0)
    or on ``batch`` samples, with and without joint friction where it applies."""
    n = getattr(robot, "nv", robot.dof)
    q0 = robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.dof)
    q = q0 if not batch else np.tile(q0, (batch, 1))
    z = np.zeros(q.shape[:-1] + (n,))
    frame = robot.frame_names[-1]
    calls = [(getattr(robot, name), (q, *[z] * (k - 1)), {}) for name, k in _DYNAMICS.items()]
    calls += [(getattr(robot, name), (q, z, z), {"friction": False}) for name in ("inverse_dynamics",
                                                                                   "forward_dynamics")]
    calls += [(getattr(robot, name), (q, *[z] * (k - 1), frame), {}) for name, k in _FRAMES.items()]
    for method, args, kwargs in calls:
        try:
            method(*args, **kwargs)
        except ModelError:  # a singular mass matrix: the kernel ran (compiled), the checked solve refused
            pass


# declared quantities whose kernels take longest to compile, first (the build hands groups out in
# order, so the longest start first; the order only balances the build's processes)
LONGEST_FIRST = ("forward_dynamics", "forward_dynamics_derivatives", "inverse_dynamics_derivatives",
                 "inverse_dynamics_derivatives_general", "forward_dynamics_derivatives_general", "frame_velocity",
                 "jacobian")


class Group(NamedTuple):
    """A group of kernels: its ``label``, the ``work`` that compiles (or loads) them, and whether
    they are ``apart``: compiled by that work alone (up to small shared helpers), so that a
    process of their own can compile them (:mod:`composedyn.kernels.build`); the other groups
    reach kernels of several quantities."""

    label: str
    work: Callable[[], object]
    apart: bool = True


@functools.cache
def groups() -> list[Group]:
    """Every :class:`Group` of kernels: one per declared quantity and per kernel for trees of
    any joints (``Quantity.general``): its C entries, its serial loop and, where this thread
    may run one, its parallel loop; and closed chains; each compiled apart from the others,
    the longest first; then the ``Robot`` methods on one sample and on batches, the floating
    base and inverse kinematics, which reach the quantities' kernels.  Made once per process
    (the bundled robot they exercise is loaded once)."""
    import composedyn as cd
    from composedyn.dynamics import dispatch
    from composedyn.dynamics.compiled import declare, quantities
    from composedyn.dynamics.compiled.parallel import PARALLEL_WORK, parallel_safe

    fixed = cd.load("panda")
    big = PARALLEL_WORK // fixed.dof + 1  # enough samples for the parallel loops

    def routes(q) -> Group:  # q's C entries and batch loops: its kernel is compiled for the first (the
        def work():  # callers give it one set of argument types, jit.readonly), the others add their own code
            arrays = dispatch.packed(fixed.model).of(q)
            declare.entry(q)
            if declare.takes_extras(q):
                declare.entry(q, True)
            declare.warm(q, arrays, 1)
            if parallel_safe():
                declare.warm(q, arrays, 2, parallel=True)

        return Group(label(q), work)

    def methods():
        for batch in (0, 2, big):
            exercise(fixed, batch)

    def floating():
        robot = cd.load("panda", floating=True)
        for batch in (0, 2, big):
            exercise(robot, batch)

    def closed():
        from composedyn.dynamics.compiled.closed import kernel

        kernel("one")
        kernel("batch")

    def ik():
        fixed.inverse_kinematics(fixed.frame_names[-1], fixed.frame_pose(np.zeros(fixed.dof), fixed.frame_names[-1]))

    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    kernels = [k for q in quantities.DECLARED.values() for k in (q, q.general) if k is not None]  # every form
    declared = sorted(kernels, key=lambda q: rank.get(q.name, len(rank)))
    return ([routes(q) for q in declared[:len(rank)]] + [Group("closed chains", closed)]
            + [routes(q) for q in declared[len(rank):]]
            + [Group("Robot methods, one sample and batches", methods, False),
               Group("floating base", floating, False), Group("inverse kinematics", ik, False)])


def label(q) -> str:
    """A declared quantity's name in words."""
    return q.name.replace("_", " ")


def warm_all(stream=None, only: int | None = None) -> dict[str, float]:
    """Compile (or load) every group of :func:`groups` (``only``: the group of that index only);
    the seconds each took."""
    import warnings

    from composedyn.errors import ModelWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)  # the bundled robots' remarks, about no user's input
        work = groups() if only is None else [groups()[only]]
        steps = Steps(len(work), stream)
        for group in work:
            steps.run(group.label, group.work)
    return steps.seconds

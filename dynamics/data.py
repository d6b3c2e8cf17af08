"""A robot's compiled state per thread: a ``Data`` over the robot's packed model arrays.

``Data`` (Pinocchio's split of model and data, without its statefulness: no result
depends on an earlier call) maps the name of a declared quantity
(:mod:`composedyn.dynamics.compiled.quantities`) to its C caller on this robot, built on
first use with the quantity's scratch arrays, which belong to this ``Data`` alone.  A
robot keeps one ``Data`` per thread (:class:`ThreadData`), so two threads never write
the same scratch.  Each caller checks its arguments in C and returns the result, or
None for what it does not take (any other type, shape or dtype, NaN or inf, a singular
mass matrix): the method then takes its general path, which converts and names the
error.  Under the NumPy backend every caller returns None.

Plain Python: numba is imported when the first caller is built.
"""

from __future__ import annotations

import threading

import numpy as np

from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled.layout import Arrays, model_dims, packed

__all__ = ["NO_DATA", "WITH_EXTRAS", "Arrays", "Data", "ThreadData", "packed"]


def _none(*args, **kwargs) -> None:
    return None


WITH_EXTRAS = "+extras"
"""``Data[name + WITH_EXTRAS]``: the C caller of quantity ``name`` that takes its extras (external
wrenches: (bodies, 6) forces flattened to one vector) after its input vectors
(:func:`composedyn.dynamics.compiled.declare.caller`); a caller returning None when it has none."""


class Data(dict):
    """Quantity name -> its C caller on one robot for one thread (module docstring); ``arrays``
    the robot's packed model (a floating robot's: the robot as a tree whose root joint is the
    base's joint)."""

    def __init__(self, arrays: Arrays):
        super().__init__()
        self.arrays = arrays
        self.scratch: dict = {}

    def __missing__(self, name: str):
        if dispatch.backend() == "numpy":  # not kept: the callers are built once numba is back
            return _none
        from composedyn.dynamics.compiled import quantities
        from composedyn.dynamics.compiled.declare import caller, for_tree, takes_extras

        extras = name.endswith(WITH_EXTRAS)
        q = quantities.DECLARED[name.removesuffix(WITH_EXTRAS)]
        q = for_tree(q, self.arrays.of(q)[0])  # the kernel of this tree's form
        if extras and not takes_extras(q):
            c = self[name] = _none
            return c
        c = self[name] = caller(q, self.arrays.of(q), self.scratch_of(q), dispatch.SWITCH, extras=extras)
        return c

    def scratch_of(self, q) -> tuple:
        """The scratch arrays of quantity ``q`` on this robot, made once."""
        s = self.scratch.get(q)
        if s is None:
            n = model_dims(self.arrays.bodies[0])
            s = self.scratch[q] = tuple(np.zeros(q.shape(shape, n)) for shape in q.scratch)
        return s


class _NoData(dict):
    """The Data of a robot without compiled path (dependent mimic joints, no moving joint)."""

    arrays = None

    def __missing__(self, name: str):
        return _none


NO_DATA = _NoData()


class ThreadData(threading.local):
    """``.data``: this thread's :class:`Data` of one robot (made on the thread's first use), or
    :data:`NO_DATA` when ``arrays`` is None or not ``direct`` (the methods' arguments are not
    the arrays' coordinates: dependent mimic joints); ``.general``: the callers of the general
    path, which takes all-joint coordinates (``.data`` itself when ``direct``)."""

    def __init__(self, arrays: Arrays | None, direct: bool = True):
        self.arrays = arrays
        self.general = NO_DATA if arrays is None else Data(arrays)
        self.data = self.general if direct else NO_DATA
        self.fast = None  # robot.fast of this thread, made on first use

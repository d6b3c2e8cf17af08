"""Every route of every quantity: NaN or inf in gives NaN out or a ValueError, never a number.

Routes of each declared quantity (``composedyn.dynamics.compiled.quantities``): the
general path (``dispatch.call``: the NumPy reference, or the compiled batch loop for one
sample and for batches) and the ``Robot`` methods (their C callers first).
"""

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch

FRAME = "flange"  # panda's last frame
OTHER_METHODS = {  # Robot methods built on the declared quantities
    "task_inertia": lambda r, q: r.task_inertia(q, FRAME),
    "frame_acceleration_local": lambda r, q: r.frame_acceleration(q, q, q, FRAME, "local"),
}


def general_call(quantity):
    """Quantity ``quantity`` by the general path at an array q used for every input (the last frame)."""
    def call(m, q):
        frame = {"frame": len(m.link_names) - 1} if any(o == "frame" for o, _ in quantity.options) else {}
        result = dispatch.call(quantity.name, m, None, *[q] * len(quantity.inputs), **frame)
        return result[0] if isinstance(result, tuple) else result
    return call


def method_call(quantity):
    """Quantity ``quantity`` by its ``Robot`` method (the method of the same name)."""
    def call(robot, q):
        frame = [FRAME] if any(o == "frame" for o, _ in quantity.options) else []
        result = getattr(robot, quantity.name)(*[q] * len(quantity.inputs), *frame)
        return result[0] if isinstance(result, tuple) else result
    return call


def declared():
    from composedyn.dynamics.compiled import quantities

    return quantities.DECLARED


CALLS = {name: general_call(q) for name, q in declared().items()}
METHODS = {**{name: method_call(q) for name, q in declared().items()}, **OTHER_METHODS}


def test_every_declared_quantity_has_a_method_and_a_reference():
    from composedyn.dynamics.compiled import quantities

    for q in quantities.DECLARED.values():  # the facade's method and the general path's NumPy reference
        assert callable(getattr(cd.Robot, q.name)) and callable(q.reference), q.name


@pytest.fixture(params=["numba", "numpy"])
def backend(request):
    dispatch.set_backend(request.param)
    yield request.param
    dispatch.set_backend("auto")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("quantity", sorted(CALLS))
@pytest.mark.parametrize("batch", [(), (3,)])
def test_dispatch_routes_propagate_non_finite_input(backend, quantity, bad, batch):
    robot = cd.load("panda")
    q = np.full(batch + (robot.dof,), 0.3)
    q[..., 2] = bad
    try:
        out = CALLS[quantity](robot.model, q)
    except ValueError:  # ModelError included: a refusal is fine, a number is not
        return
    if batch:
        assert np.all(np.isnan(out).reshape(batch[0], -1).any(axis=1))
    else:
        assert np.isnan(out).any()


@pytest.mark.parametrize("quantity", sorted(METHODS))
@pytest.mark.parametrize("batch", [(), (3,)])
def test_robot_methods_refuse_non_finite_input(backend, quantity, batch):
    robot = cd.load("panda")
    q = np.full(batch + (robot.dof,), 0.3)
    q[..., 0] = np.nan
    with pytest.raises(ValueError, match="NaN|finite"):
        METHODS[quantity](robot, q)

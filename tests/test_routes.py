"""Every route of every quantity: NaN or inf in gives NaN out or a ValueError, never a number.

Routes (``dispatch.ROUTES``): the NumPy reference, the compiled single-sample
kernel, the compiled batch loop, and the ``Robot`` methods' C callers of the declared
quantities (``composedyn.dynamics.compiled.quantities``).
"""

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch

CALLS = {
    "inverse_dynamics": lambda m, q: dispatch.rnea(m, q, q, q),
    "gravity_torques": lambda m, q: dispatch.gravity(m, q),
    "mass_matrix": lambda m, q: dispatch.crba(m, q),
    "coriolis_matrix": lambda m, q: dispatch.coriolis_matrix(m, q, q),
    "forward_dynamics": lambda m, q: dispatch.forward_dynamics(m, q, q, q),
    "frame_pose": lambda m, q: dispatch.frame_pose(m, q, len(m.link_names) - 1),
    "jacobian": lambda m, q: dispatch.jacobian(m, q, len(m.link_names) - 1, True),
    "frame_velocity": lambda m, q: dispatch.frame_velocity(m, q, q, len(m.link_names) - 1),
    "frame_acceleration": lambda m, q: dispatch.frame_acceleration(m, q, q, q, len(m.link_names) - 1),
    "center_of_mass": lambda m, q: dispatch.center_of_mass(m, q),
    "com_jacobian": lambda m, q: dispatch.com_jacobian(m, q),
    "regressor": lambda m, q: dispatch.regressor(m, q, q, q),
    "inverse_dynamics_derivatives": lambda m, q: dispatch.rnea_derivatives(m, q, q, q)[0],
    "forward_dynamics_derivatives": lambda m, q: dispatch.forward_dynamics_derivatives(m, q, q, q)[0],
}
METHODS = {
    "inverse_dynamics": lambda r, q: r.inverse_dynamics(q, q, q),
    "gravity_torques": lambda r, q: r.gravity_torques(q),
    "mass_matrix": lambda r, q: r.mass_matrix(q),
    "coriolis_matrix": lambda r, q: r.coriolis_matrix(q, q),
    "forward_dynamics": lambda r, q: r.forward_dynamics(q, q, q),
    "bias_torques": lambda r, q: r.bias_torques(q, q),
    "frame_pose": lambda r, q: r.frame_pose(q, "flange"),
    "jacobian": lambda r, q: r.jacobian(q, "flange"),
    "frame_velocity": lambda r, q: r.frame_velocity(q, q, "flange"),
    "frame_acceleration": lambda r, q: r.frame_acceleration(q, q, q, "flange", "local"),
    "center_of_mass": lambda r, q: r.center_of_mass(q),
    "com_jacobian": lambda r, q: r.com_jacobian(q),
    "task_inertia": lambda r, q: r.task_inertia(q, "flange"),
    "inverse_dynamics_derivatives": lambda r, q: r.inverse_dynamics_derivatives(q, q, q),
    "forward_dynamics_derivatives": lambda r, q: r.forward_dynamics_derivatives(q, q, q),
}


def test_every_route_names_existing_kernels():
    import importlib

    for name, route in dispatch.ROUTES.items():
        kernels = importlib.import_module(f"composedyn.dynamics.compiled.{route.module}")
        for k in (route.one, route.loop + "_serial", route.loop + "_parallel"):
            assert hasattr(kernels, k), (name, k)


def test_every_declared_quantity_has_a_method_and_a_route():
    from composedyn.dynamics.compiled import quantities

    assert set(quantities.FIXED) <= set(METHODS) and set(quantities.FLOATING) <= set(quantities.FIXED)
    assert set(quantities.FIXED) - {"bias_torques"} <= set(dispatch.ROUTES)


def test_every_route_has_a_test():
    assert set(CALLS) == set(dispatch.ROUTES)


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

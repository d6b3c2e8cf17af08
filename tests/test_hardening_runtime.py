"""Bounded cost and honest failures at run time: read-only or strided inputs on the general path
compile no new kernel specialisation; ``simulate`` has a default wall-time limit and blames the
torque input when a run diverges or stalls; a four-bar crank at thousands of radians closes as
it does near zero, quickly."""

from __future__ import annotations

import gc
import inspect
import time

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.simulation.simulate import DEFAULT_TIMEOUT
from pin_oracle import erd_robots_dir


def _signatures() -> int:
    return sum(len(d.signatures) for d in gc.get_objects() if isinstance(d, CPUDispatcher))


def _read_only(x):
    x = np.array(x)
    x.flags.writeable = False
    return x


def _strided(x):
    y = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    y[..., ::2] = x
    return y[..., ::2]


@pytest.mark.parametrize("shape", [(), (3,)])
def test_read_only_and_strided_inputs_compile_nothing_new(shape):
    r = cd.load("puma560")
    frame = r.frame_names[-1]
    rng = np.random.default_rng(0)
    q, qd = rng.uniform(-1, 1, (2,) + shape + (r.dof,))
    calls = [lambda a, b: r.center_of_mass(a), lambda a, b: r.regressor(a, b, b),
             lambda a, b: r.inverse_dynamics(a, b, b), lambda a, b: r.mass_matrix(a),
             lambda a, b: r.frame_velocity(a, b, frame), lambda a, b: r.inverse_dynamics_derivatives(a, b, b),
             lambda a, b: r.forward_dynamics(a, b, b, smooth_friction=0.1)]
    for f in calls:
        want = f(q, qd)  # compiled (or loaded) for plain arrays
        before = _signatures()
        for make in (_read_only, _strided):
            got = f(make(q), make(qd))
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert np.array_equal(a, b)
        assert _signatures() == before


def test_simulate_has_a_default_wall_time_limit():
    timeout = inspect.signature(cd.simulate).parameters["timeout"].default
    assert timeout == DEFAULT_TIMEOUT and 0 < timeout < np.inf
    assert f"default {DEFAULT_TIMEOUT:g} s" in cd.simulate.__doc__


def test_simulate_with_huge_torques_blames_the_input():
    solo = cd.load(str(erd_robots_dir() / "solo_description/robots/solo12.urdf"), floating=True)
    tau = np.zeros(solo.nv)
    tau[6:] = 1e12
    start = time.perf_counter()
    blame = r"largest applied torque was 1e\+12 .*effort limit.*check the torque input"
    with pytest.raises(cd.SimulationError, match=blame) as info:
        cd.simulate(solo, solo.random_configuration(seed=0), np.zeros(solo.nv), np.linspace(0, 1, 11),
                    torque=tau, timeout=3)
    assert time.perf_counter() - start < 60
    assert "NaN" not in str(info.value)


@pytest.mark.parametrize("friction", [None, 0.1])
def test_simulate_diverging_state_blames_the_input(friction):
    r = cd.load("puma560")
    blame = r"largest applied torque was 1e\+300 .*check the torque input"
    with pytest.raises(cd.SimulationError, match=blame) as info:
        cd.simulate(r, np.zeros(r.dof), np.zeros(r.dof), np.linspace(0, 1, 11), torque=np.full(r.dof, 1e300),
                    smooth_friction=friction, timeout=10)
    assert "contains NaN" not in str(info.value)


@pytest.fixture(params=["auto", "numpy"])
def backend(request):
    """The compiled closure kernel (with the NumPy closure as its fallback), or the NumPy closure only."""
    dispatch.set_backend(request.param)
    yield request.param
    dispatch.set_backend("auto")


@pytest.mark.parametrize("angle", [2048.56, 1.0 + 2 * np.pi * 326, -5000.3])
def test_fourbar_closes_at_large_crank_angles(angle, backend):
    near = cd.load_closed_chain("fourbar")
    want = near.assemble(np.array([np.remainder(angle + np.pi, 2 * np.pi) - np.pi]))
    fresh = cd.load_closed_chain("fourbar")
    start = time.perf_counter()
    got = fresh.assemble(np.array([angle]))
    assert time.perf_counter() - start < 2.0
    assert got[0] == angle
    turns = np.round((got - want) / (2 * np.pi))
    assert np.allclose(got - 2 * np.pi * turns, want, rtol=0, atol=1e-12 * abs(angle))
    assert np.abs(fresh.constraint(want)).max() < 1e-12


def test_fourbar_path_to_large_angles_stays_on_its_branch(backend):
    ch = cd.load_closed_chain("fourbar")
    path = ch.assemble(np.linspace(0.0, 2048.56, 200)[:, None])
    ref = cd.load_closed_chain("fourbar")
    for k in (0, 57, 199):
        a = path[k, 0]
        want = ref.assemble(np.array([np.remainder(a + np.pi, 2 * np.pi) - np.pi]))
        turns = np.round((path[k] - want) / (2 * np.pi))
        assert np.allclose(path[k] - 2 * np.pi * turns, want, rtol=0, atol=1e-10)


def test_a_stalled_run_with_ordinary_torques_does_not_blame_them():
    r = cd.load("two_link")
    with pytest.raises(cd.SimulationError, match=r"wall time.*largest applied torque was 0 ") as info:
        cd.simulate(r, np.zeros(r.dof), np.zeros(r.dof), np.linspace(0, 1, 11), timeout=1e-9)
    assert "check the torque input" not in str(info.value)


def test_cli_simulate_timeout_is_one_line(tmp_path):
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "composedyn.cli", "simulate", "two_link", "--timeout", "1e-9",
                          "--samples", "11"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "1e-09 s of wall time" in run.stderr

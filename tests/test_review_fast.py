"""robot.fast: integer options are integers (never rounded), and out= for quantities of several results."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd


@pytest.fixture(scope="module")
def puma():
    return cd.load("puma560")  # joint friction: the friction option changes the torques


def _state(robot, seed=0, N=None):
    rng = np.random.default_rng(seed)
    shape = (robot.dof,) if N is None else (N, robot.dof)
    return rng.normal(size=shape), rng.normal(size=shape), rng.normal(size=shape)


def test_non_integer_options_are_refused_not_rounded(puma):
    fast = puma.fast
    q, qd, qdd = _state(puma)
    with pytest.raises(ValueError, match=r"robot.fast.jacobian: frame must be an integer.*got 1.9"):
        fast.jacobian(q, 1.9, 0)
    with pytest.raises(ValueError, match=r"robot.fast.jacobian: local must be an integer.*got 0.9"):
        fast.jacobian(q, 2, 0.9)
    with pytest.raises(ValueError, match=r"robot.fast.inverse_dynamics: friction must be an integer.*got 0.5"):
        fast.inverse_dynamics(q, qd, qdd, friction=0.5)
    on, off = puma.inverse_dynamics(q, qd, qdd), puma.inverse_dynamics(q, qd, qdd, friction=False)
    assert np.abs(on - off).max() > 1e-3  # the option matters on this robot
    for flag in (True, 1, np.int64(1), np.True_):
        assert np.array_equal(fast.inverse_dynamics(q, qd, qdd, friction=flag), on)
    frame = puma.frame_names.index(puma.frame_names[-1])
    assert np.allclose(fast.jacobian(q, np.int32(frame), 0), puma.jacobian(q, puma.frame_names[-1]), atol=1e-13)


@pytest.mark.parametrize("N", [None, 4])
def test_derivatives_write_into_a_tuple_of_out_arrays(puma, N):
    fast, n = puma.fast, puma.dof
    q, qd, x = _state(puma, 1, N)
    lead = () if N is None else (N,)
    for method, k in (("inverse_dynamics_derivatives", 2), ("forward_dynamics_derivatives", 3)):
        want = getattr(puma, method)(q, qd, x)
        out = tuple(np.full(lead + (n, n), np.nan) for _ in range(k))
        got = getattr(fast, method)(q, qd, x, out=out)
        assert got is out
        for o, w in zip(out, want):
            assert np.allclose(o, w, rtol=1e-12, atol=1e-12)
        again = getattr(fast, method)(q + 0.1, qd, x, out=out)  # every entry rewritten
        for o, w in zip(again, getattr(puma, method)(q + 0.1, qd, x)):
            assert np.allclose(o, w, rtol=1e-12, atol=1e-12)


def test_out_of_several_results_is_checked(puma):
    fast, n = puma.fast, puma.dof
    q, qd, x = _state(puma, 2)
    f = fast.forward_dynamics_derivatives
    with pytest.raises(ValueError, match=r"out must be a tuple of 3 arrays \(one per result\), got ndarray"):
        f(q, qd, x, out=np.zeros((3, n, n)))
    with pytest.raises(ValueError, match=r"out must be a tuple of 3 arrays .*got 2 items"):
        f(q, qd, x, out=(np.zeros((n, n)), np.zeros((n, n))))
    with pytest.raises(ValueError, match=rf"out\[1\] has shape \({n}, {n + 1}\), not the result's \({n}, {n}\)"):
        f(q, qd, x, out=(np.zeros((n, n)), np.zeros((n, n + 1)), np.zeros((n, n))))
    with pytest.raises(ValueError, match=r"out\[2\] has dtype float32"):
        f(q, qd, x, out=(np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n), np.float32)))
    a = np.zeros((n, n))
    with pytest.raises(ValueError, match=r"out\[1\] shares memory with another out array"):
        f(q, qd, x, out=(a, a, np.zeros((n, n))))
    block = np.zeros(n * n)
    with pytest.raises(ValueError, match="out shares memory with an input"):
        f(block[:n], qd, x, out=(block.reshape(n, n), np.zeros((n, n)), np.zeros((n, n))))

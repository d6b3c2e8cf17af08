"""``robot.fast`` refuses what the ``Robot`` methods refuse: an ``out=`` sharing memory with an
input (the kernel would read the result it is writing), a negative, NaN or -inf
``smooth_friction``; it returns ``out`` itself when given, on the C path and on the fallback."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd


@pytest.fixture(scope="module")
def stanford():
    return cd.load("stanford")


@pytest.fixture(scope="module")
def puma():
    return cd.load("puma560")


def test_gravity_into_its_own_input_is_refused(stanford):
    q = np.random.default_rng(0).uniform(-1, 1, stanford.dof)
    want = stanford.gravity_torques(q)
    x = q.copy()
    with pytest.raises(ValueError, match="shares memory"):
        stanford.fast.gravity_torques(x, out=x)
    assert np.array_equal(x, q)  # nothing written
    assert np.allclose(stanford.fast.gravity_torques(q, out=np.empty(stanford.dof)), want, rtol=1e-12, atol=1e-9)


def test_partly_overlapping_out_is_refused(puma):
    b = np.random.default_rng(1).uniform(-1, 1, 18)
    with pytest.raises(ValueError, match="shares memory"):
        puma.fast.inverse_dynamics(b[0:6], b[6:12], b[12:18], out=b[1:7])
    with pytest.raises(ValueError, match="shares memory"):  # a strided input overlapping out
        puma.fast.inverse_dynamics(b[0:12:2], b[6:12], b[12:18], out=b[11:17])
    x, (qd, qdd) = np.random.default_rng(3).uniform(-1, 1, 24), np.random.default_rng(4).uniform(-1, 1, (2, 6))
    with pytest.raises(ValueError, match="shares memory"):  # out within the span of a strided input alone
        puma.fast.inverse_dynamics(x[0:12:2], qd, qdd, out=x[5:11])
    with pytest.raises(ValueError, match="shares memory"):  # the same, reversed
        puma.fast.inverse_dynamics(x[10::-2], qd, qdd, out=x[5:11])
    B = np.random.default_rng(2).uniform(-1, 1, (3, 6))
    with pytest.raises(ValueError, match="shares memory"):  # a batch
        puma.fast.gravity_torques(B, out=B)
    with pytest.raises(ValueError, match="shares memory"):
        puma.fast.inverse_dynamics(B, B[::-1], B, out=B)
    # disjoint slices of one buffer are fine and equal the method
    tau = puma.fast.inverse_dynamics(b[0:6], b[6:12], b[12:18], out=np.zeros(6))
    assert np.allclose(tau, puma.inverse_dynamics(b[0:6], b[6:12], b[12:18]), rtol=1e-12, atol=1e-9)
    big = np.concatenate([b, np.zeros(6)])
    tau2 = puma.fast.inverse_dynamics(big[0:6], big[6:12], big[12:18], out=big[18:24])
    assert tau2 is not None and np.array_equal(big[18:24], tau)


@pytest.mark.parametrize("width", [-1.0, float("nan"), float("-inf"), -1, 10**400, "x"],
                         ids=["negative", "nan", "-inf", "negative int", "10**400", "str"])
def test_forward_dynamics_refuses_a_bad_smoothing_width(puma, width):
    q = np.zeros(6)
    with pytest.raises(ValueError, match="smooth_friction"):
        puma.fast.forward_dynamics(q, q, q, smooth_friction=width)
    with pytest.raises(ValueError, match="smooth_friction"):
        puma.fast.forward_dynamics(q, q, q, width)
    with pytest.raises(ValueError, match="smooth_friction"):  # the method too, naming it
        puma.forward_dynamics(q, q, q, smooth_friction=width)


def test_fallback_returns_out_itself(puma):
    q = np.zeros(6)
    out = np.empty(6)
    # a float32 input is refused by the C caller: the fallback serves (or refuses) it
    with pytest.raises(ValueError):
        puma.fast.gravity_torques(q.astype(np.float32), out=out)
    # a 0-d-strided-but-valid input the C caller gives to the fallback: a (1, n) view reshaped
    x = np.zeros((1, 6))[0]
    assert puma.fast.gravity_torques(x, out=out) is out
    # forward dynamics through the fallback (singular M or NaN): out itself is returned
    qn = q.copy()
    qn[0] = np.nan
    assert puma.fast.forward_dynamics(qn, q, q, out=out) is out
    assert puma.fast._gravity_torques(q, out=out) is out
    assert puma.fast._forward_dynamics(q, q, q, out=out) is out

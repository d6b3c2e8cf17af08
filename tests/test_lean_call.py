"""The C caller of the one-sample entries (``_call.Lean``, :mod:`composedyn.dynamics.compiled.lean`).

What it takes (float64 vectors, strided ones copied, also beyond its stack
buffer), what it hands to its fallback (everything else: subclasses, byte
order, keywords it does not know), its switch (the NumPy backend), and that it
keeps the model arrays alive and is collected with its robot.  Values are
compared with the NumPy reference (itself compared with Pinocchio elsewhere)
and with contiguous copies.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import lean
from composedyn.dynamics.compiled._call import Lean
from composedyn.dynamics.compiled.layout import pack
from random_robots import random_urdf

TOL = 1e-12


def close(a, b) -> bool:
    return np.allclose(a, b, rtol=TOL, atol=TOL)


@pytest.fixture(scope="module")
def long_robot():
    """A 70-joint chain: strided vectors no longer fit the caller's stack buffer (64)."""
    return cd.from_urdf(random_urdf(3, 70, p_fixed=0.0, p_branch=0.0, damping=True, friction=True))


def test_strided_vectors_beyond_the_stack_buffer(long_robot):
    r, n = long_robot, long_robot.dof
    S = np.random.default_rng(0).uniform(-1, 1, (n, 3))
    q, qd, qdd = S[:, 0], S[:, 1], S[:, 2]
    assert not q.flags.c_contiguous and n > 64
    c = [x.copy() for x in (q, qd, qdd)]
    assert r._one["inverse_dynamics"](q, qd, qdd) is not None  # taken by the C caller
    assert np.array_equal(r.inverse_dynamics(q, qd, qdd), r.inverse_dynamics(*c))
    assert np.array_equal(r.fast.forward_dynamics(q, qd, qdd), r.fast.forward_dynamics(*c))
    assert np.array_equal(r.mass_matrix(q), r.mass_matrix(c[0]))


def test_what_the_caller_does_not_take_goes_to_the_general_path():
    r = cd.from_urdf(random_urdf(6, 11, damping=True, friction=True, armature=True))
    n = r.dof
    q, qd, qdd = np.random.default_rng(1).uniform(-1, 1, (3, n))
    want = r.inverse_dynamics(q, qd, qdd)

    class Sub(np.ndarray):
        pass

    one = r._one["inverse_dynamics"]
    for other in (q.view(Sub), q.astype(">f8"), q[None], q.tolist()):
        assert one(other, qd, qdd) is None  # the method's general path then converts
        assert close(r.inverse_dynamics(other, qd, qdd), want if np.ndim(other) == 1 else want[None])
    assert one(q, qd) is None and one(q, qd, qdd, q) is None and one(q, qd, qdd, out=None) is not None
    assert r._one["forward_dynamics"](q, qd, want, True) is None  # the float argument: a float or an int
    assert close(r._one["forward_dynamics"](q, qd, want, np.float64(0.0)), qdd)  # (a float subclass is one)
    assert close(r.forward_dynamics(q, qd, want), qdd)
    fd = r.fast
    with pytest.raises(TypeError):
        fd.mass_matrix(q, outt=np.empty((n, n)))  # a keyword it does not know: the Python function's error
    with pytest.raises(ValueError, match="robot.fast.mass_matrix"):
        fd.mass_matrix(q.astype(">f8"))


def test_the_numpy_backend_switches_the_callers_off():
    r = cd.from_urdf(random_urdf(5, 4, damping=True, friction=True, armature=True))
    q = np.random.default_rng(2).uniform(-1, 1, r.dof)
    compiled = r.mass_matrix(q)
    dispatch.set_backend("numpy")
    try:
        assert r._one["mass_matrix"](q) is None and r._one["gravity_torques"](q) is None
        assert close(r.mass_matrix(q), compiled)
        fresh = cd.from_urdf(random_urdf(5, 4))
        assert fresh._one["coriolis_matrix"](q, q) is None  # not built under the NumPy backend
    finally:
        dispatch.set_backend("auto")
    assert r._one["mass_matrix"](q) is not None and fresh._one["coriolis_matrix"](q, q) is not None


def test_the_caller_keeps_its_model_arrays_and_goes_with_its_robot():
    r = cd.from_urdf(random_urdf(4, 8))
    q = np.random.default_rng(3).uniform(-1, 1, r.dof)
    call = lean.lean("gravity_torques", pack(r.model))  # the only reference to these arrays
    gc.collect()
    assert close(call(q), r.gravity_torques(q))
    fd = weakref.ref(r.fast)
    r.fast.mass_matrix(q)
    del r
    gc.collect()
    assert fd() is None


def test_construction_is_checked():
    im, fm = pack(cd.from_urdf(random_urdf(3, 1)).model)
    addr, on, n = lean.compiled("mass_matrix").address, lean.ON, fm.shape[0]
    with pytest.raises(ValueError, match="model arrays"):
        Lean(addr, (im, np.ones((n, 6))[:, ::2]), (n,), ((n, n),), None, False, on, None)
    with pytest.raises(ValueError, match="model arrays"):
        Lean(addr, (), (n,), ((n, n),), None, False, on, None)
    with pytest.raises(ValueError, match="inputs"):
        Lean(addr, (im, fm), (n, n, n, n), ((n, n),), None, False, on, None)
    with pytest.raises(ValueError, match="inputs"):
        Lean(addr, (im, fm), (0,), ((n, n),), None, False, on, None)
    with pytest.raises(ValueError, match="outputs"):
        Lean(addr, (im, fm), (n,), (n,), None, False, on, None)
    with pytest.raises(ValueError, match="switch"):
        Lean(addr, (im, fm), (n,), ((n, n),), None, False, np.ones(1), None)
    with pytest.raises(TypeError, match="fallback"):
        Lean(addr, (im, fm), (n,), ((n, n),), None, False, on, 3)
    with pytest.raises(ValueError, match="packed model arrays"):
        lean.lean("mass_matrix", (im, fm[:, :-1]))
    with pytest.raises(ValueError, match="packed model arrays"):
        lean.lean("floating_mass_matrix", (im, fm))  # no base


def test_a_robot_pickles_after_its_callers_were_built():
    import pickle

    r = cd.from_urdf(random_urdf(5, 6, damping=True, friction=True, armature=True))
    q, qd, qdd = np.random.default_rng(4).uniform(-1, 1, (3, r.dof))
    want = r.inverse_dynamics(q, qd, qdd), r.fast.mass_matrix(q)
    copy = pickle.loads(pickle.dumps(r))
    assert np.array_equal(copy.inverse_dynamics(q, qd, qdd), want[0])
    assert np.array_equal(copy.fast.mass_matrix(q), want[1]) and copy._one["mass_matrix"](q) is not None


def test_a_missing_c_extension_is_one_clear_error():
    import subprocess
    import sys

    code = ("import sys; sys.modules['composedyn.dynamics.compiled._call'] = None\n"
            "import numpy as np, composedyn as cd\n"
            "cd.load('two_link').mass_matrix(np.zeros(2))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    assert "ImportError: composedyn's C extension composedyn.dynamics.compiled._call is not built" in run.stderr
    assert "pip install" in run.stderr.splitlines()[-1]


def test_floating_and_derivative_entries_take_the_c_caller():
    """A floating robot's dynamics and the derivatives go through their C entries for plain
    vectors, with the general path's values (lists take that path); a zero quaternion is
    declined (the general path names it); a floating robot pickles after those calls."""
    import pickle

    urdf = random_urdf(7, 5, damping=True, friction=True, armature=True)
    fr = cd.from_urdf(urdf, floating=True)
    rng = np.random.default_rng(6)
    q = fr.neutral() + np.r_[rng.uniform(-0.3, 0.3, 3), 0, 0, 0, 0, rng.uniform(-1, 1, fr.nq - 7)]
    q[3:7] = rng.normal(size=4)
    q[3:7] /= np.linalg.norm(q[3:7])
    v, a = rng.uniform(-1, 1, (2, fr.nv))
    one = fr._one
    for name, args, method in [
            ("floating_inverse_dynamics", (q, v, a), lambda *x: fr.inverse_dynamics(*x)),
            ("floating_inverse_dynamics_rigid", (q, v, a), lambda *x: fr.inverse_dynamics(*x, friction=False)),
            ("floating_mass_matrix", (q,), lambda *x: fr.mass_matrix(*x)),
            ("floating_forward_dynamics", (q, v, a, 0.0), lambda *x: fr.forward_dynamics(*x[:3])),
            ("floating_forward_dynamics_rigid", (q, v, a, 0.0), lambda *x: fr.forward_dynamics(*x[:3], friction=False)),
            ("floating_inverse_dynamics_derivatives", (q, v, a, 0.0),
             lambda *x: fr.inverse_dynamics_derivatives(*x[:3])),
            ("floating_forward_dynamics_derivatives_rigid", (q, v, a, 0.0),
             lambda *x: fr.forward_dynamics_derivatives(*x[:3], friction=False))]:
        got = one[name](*args)
        assert got is not None, name
        want = method(*(x.tolist() if isinstance(x, np.ndarray) else x for x in args))
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert close(g, w), name
    q0 = q.copy()
    q0[3:7] = 0.0
    assert one["floating_mass_matrix"](q0) is None
    with pytest.raises(ValueError):
        fr.mass_matrix(q0)
    r = cd.from_urdf(urdf)
    x, xd, xdd = rng.uniform(-1, 1, (3, r.dof))
    for name, method in [("inverse_dynamics_derivatives", r.inverse_dynamics_derivatives),
                         ("forward_dynamics_derivatives", r.forward_dynamics_derivatives)]:
        for suffix, friction in (("", True), ("_rigid", False)):
            got = r._one[name + suffix](x, xd, xdd, 0.02)
            want = method(x.tolist(), xd.tolist(), xdd.tolist(), friction=friction, smooth_friction=0.02)
            assert isinstance(got, tuple) and len(got) == len(want)
            assert all(close(g, w) for g, w in zip(got, want)), name + suffix
    copy = pickle.loads(pickle.dumps(fr))
    assert np.array_equal(copy.mass_matrix(q), fr.mass_matrix(q))


def test_task_space_callers_refuse_codes_that_name_no_frame():
    """The frame code arrives as the entry's number argument: negative, too large, NaN or
    huge codes give None (the method's general path), the right code the frame's Jacobian."""
    r = cd.from_urdf(random_urdf(8, 5))
    q = np.random.default_rng(7).uniform(-1, 1, r.dof)
    codes, callers = r._frame_lean
    jac = callers["jacobian"]
    frame = r.frame_names[-1]
    assert close(jac(q, codes[frame] + 1), r.jacobian(q.tolist(), frame, "local"))
    for bad in (-1, -0.5, 2 * len(r.frame_names), 1e30, float("nan"), float("inf"), 2**70):
        assert jac(q, bad) is None, bad

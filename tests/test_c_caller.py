"""The C caller of the declared quantities (``_call.Caller``, :mod:`composedyn.dynamics.compiled.declare`).

What it takes (float64 vectors, strided ones copied, also beyond its stack
buffer; integer options), what it hands to its fallback (everything else:
subclasses, byte order, keywords it does not know), its switch (the NumPy
backend), that it keeps the model arrays alive and is collected with its robot,
and that each thread has its own scratch.  Values are
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
from composedyn.dynamics.compiled import crba, declare, gravity
from composedyn.dynamics.compiled._call import Caller
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
    assert r._threads.data["inverse_dynamics"](q, qd, qdd) is not None  # taken by the C caller
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

    data = r._threads.data
    one = data["inverse_dynamics"]
    for other in (q.view(Sub), q.astype(">f8"), q[None], q.tolist()):
        assert one(other, qd, qdd) is None  # the method's general path then converts
        assert close(r.inverse_dynamics(other, qd, qdd), want if np.ndim(other) == 1 else want[None])
    assert one(q, qd) is None and one(q, qd, qdd, q) is None and one(q, qd, qdd, out=None) is not None
    assert one(q, qd, qdd, 1.0) is None and one(q, qd, qdd, 1, friction=1) is None  # an option: an int, once
    assert one(q, qd, qdd, 1, 0) is None and one(q, qd, qdd, frictions=1) is None
    rigid = r.inverse_dynamics(q.tolist(), qd, qdd, friction=False)
    assert close(one(q, qd, qdd, 0), rigid) and close(one(q, qd, qdd, friction=False), rigid)
    assert close(one(q, qd, qdd, friction=True), want)
    fd = data["forward_dynamics"]  # the number (smooth_friction), then the options
    assert fd(q, qd, want, True) is None  # the number: a float or an int, not a bool
    assert close(fd(q, qd, want, np.float64(0.0)), qdd)  # (a float subclass is one)
    assert close(fd(q, qd, want, smooth_friction=0), qdd) and fd(q, qd, want, -0.1) is None
    assert close(fd(q, qd, want, 0.0, 1), qdd) and fd(q, qd, want, 0.0, 1, friction=1) is None
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
        assert r._threads.data["mass_matrix"](q) is None and r._threads.data["gravity_torques"](q) is None
        assert close(r.mass_matrix(q), compiled)
        fresh = cd.from_urdf(random_urdf(5, 4))
        assert fresh._threads.data["coriolis_matrix"](q, q) is None  # not built under the NumPy backend
    finally:
        dispatch.set_backend("auto")
    data, fresh_data = r._threads.data, fresh._threads.data
    assert data["mass_matrix"](q) is not None and fresh_data["coriolis_matrix"](q, q) is not None


def test_the_caller_keeps_its_model_arrays_and_goes_with_its_robot():
    r = cd.from_urdf(random_urdf(4, 8))
    q = np.random.default_rng(3).uniform(-1, 1, r.dof)
    scratch = (np.zeros((r.dof, gravity.SCRATCH)),)
    call = declare.caller(gravity.GRAVITY_TORQUES, pack(r.model), scratch)  # the only reference to these arrays
    del scratch
    gc.collect()
    assert close(call(q), r.gravity_torques(q))
    fd = weakref.ref(r.fast)
    r.fast.mass_matrix(q)
    del r
    gc.collect()
    assert fd() is None


def test_construction_is_checked():
    im, fm = pack(cd.from_urdf(random_urdf(3, 1)).model)
    addr, on, n = declare.entry(crba.MASS_MATRIX).address, declare.ON, fm.shape[0]
    w = (np.zeros((n, crba.SCRATCH)),)

    def make(model=(im, fm), scratch=w, inputs=(n,), outputs=((n, n),), options=(), defaults=(), scalar=None,
             switch=on, fallback=None):
        return Caller(addr, model, scratch, inputs, outputs, options, defaults, scalar, False, switch, fallback)

    make()
    for bad, what in [({"model": (im, np.ones((n, 6))[:, ::2])}, "model arrays"), ({"model": ()}, "model arrays"),
                      ({"scratch": (np.zeros(3)[::2],)}, "scratch arrays"), ({"inputs": (n,) * 5}, "inputs"),
                      ({"inputs": (0,)}, "inputs"), ({"outputs": (n,)}, "outputs"),
                      ({"options": ("a",), "defaults": ()}, "options"), ({"switch": np.ones(1)}, "switch")]:
        with pytest.raises(ValueError, match=what):
            make(**bad)
    for bad, what in [({"options": ("a",), "defaults": (1.5,)}, "option"), ({"fallback": 3}, "fallback"),
                      ({"scalar": 3}, "scalar")]:
        with pytest.raises(TypeError, match=what):
            make(**bad)


def test_a_robot_pickles_after_its_callers_were_built():
    import pickle

    r = cd.from_urdf(random_urdf(5, 6, damping=True, friction=True, armature=True))
    q, qd, qdd = np.random.default_rng(4).uniform(-1, 1, (3, r.dof))
    want = r.inverse_dynamics(q, qd, qdd), r.fast.mass_matrix(q)
    copy = pickle.loads(pickle.dumps(r))
    assert np.array_equal(copy.inverse_dynamics(q, qd, qdd), want[0])
    assert np.array_equal(copy.fast.mass_matrix(q), want[1]) and copy._threads.data["mass_matrix"](q) is not None


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
    """A floating robot's dynamics and the derivatives go through their C callers for plain
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
    data = fr._threads.data
    for name, args, method in [
            ("inverse_dynamics", (q, v, a), lambda *x: fr.inverse_dynamics(*x)),
            ("inverse_dynamics", (q, v, a, 0), lambda *x: fr.inverse_dynamics(*x[:3], friction=False)),
            ("mass_matrix", (q,), lambda *x: fr.mass_matrix(*x)),
            ("forward_dynamics", (q, v, a, 0.0, 1), lambda *x: fr.forward_dynamics(*x[:3])),
            ("forward_dynamics", (q, v, a, 0.0, 0), lambda *x: fr.forward_dynamics(*x[:3], friction=False)),
            ("inverse_dynamics_derivatives", (q, v, a), lambda *x: fr.inverse_dynamics_derivatives(*x[:3])),
            ("forward_dynamics_derivatives", (q, v, a, 0.0, 0),
             lambda *x: fr.forward_dynamics_derivatives(*x[:3], friction=False))]:
        got = data[name](*args)
        assert got is not None, name
        want = method(*(x.tolist() if isinstance(x, np.ndarray) else x for x in args))
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert close(g, w), name
    q0 = q.copy()
    q0[3:7] = 0.0
    assert data["mass_matrix"](q0) is None
    with pytest.raises(ValueError):
        fr.mass_matrix(q0)
    r = cd.from_urdf(urdf)
    x, xd, xdd = rng.uniform(-1, 1, (3, r.dof))
    for name, method in [("inverse_dynamics_derivatives", r.inverse_dynamics_derivatives),
                         ("forward_dynamics_derivatives", r.forward_dynamics_derivatives)]:
        for friction in (True, False):
            got = r._threads.data[name](x, xd, xdd, 0.02, friction)
            want = method(x.tolist(), xd.tolist(), xdd.tolist(), friction=friction, smooth_friction=0.02)
            assert isinstance(got, tuple) and len(got) == len(want)
            assert all(close(g, w) for g, w in zip(got, want)), name
    copy = pickle.loads(pickle.dumps(fr))
    assert np.array_equal(copy.mass_matrix(q), fr.mass_matrix(q))


def test_task_space_callers_refuse_options_that_name_no_frame():
    """The frame index and the reference arrive as integer options: out of range, or not
    ints, they give None (the method's general path); the right ones the frame's Jacobian."""
    r = cd.from_urdf(random_urdf(8, 5))
    q = np.random.default_rng(7).uniform(-1, 1, r.dof)
    jac = r._threads.data["jacobian"]
    frame = r.frame_names[-1]
    k = r.frame_names.index(frame)
    assert close(jac(q, k, 1), r.jacobian(q.tolist(), frame, "local"))
    assert close(jac(q, k), r.jacobian(q.tolist(), frame, "world"))
    for bad in [(-1, 0), (len(r.frame_names), 0), (2**70, 0), (k, 2), (k, -1), (0.5, 0), (float("nan"), 0), (k, 0.0)]:
        assert jac(q, *bad) is None, bad
    assert jac(q) is None  # the frame has no default


def test_threads_have_their_own_data_and_the_results_of_serial_calls():
    """Each thread computes on its own Data (its own scratch arrays); many threads calling the
    same robot at once give exactly the results of serial calls."""
    import threading

    r = cd.from_urdf(random_urdf(9, 12, damping=True, friction=True, armature=True))
    rng = np.random.default_rng(9)
    X = rng.uniform(-1, 1, (8, 3, r.dof))
    frame = r.frame_names[-1]

    def work(x):
        q, qd, qdd = x
        return (r.inverse_dynamics(q, qd, qdd), r.mass_matrix(q), r.forward_dynamics(q, qd, qdd),
                r.jacobian(q, frame), r.fast.inverse_dynamics(q, qd, qdd))

    serial = [work(x) for x in X]
    results, datas, failures = {}, {}, []

    def run(i):
        for _ in range(200):
            if not all(np.array_equal(a, b) for a, b in zip(work(X[i]), serial[i])):
                failures.append(i)
        results[i] = work(X[i])
        datas[i] = (r._threads.data, r.fast)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(X))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and sorted(results) == list(range(len(X)))
    for i in results:
        assert all(np.array_equal(a, b) for a, b in zip(results[i], serial[i]))
    scratch = [id(w) for d, _ in datas.values() for s in d.scratch.values() for w in s]
    assert len(scratch) == len(set(scratch)) and len({id(f) for _, f in datas.values()}) == len(X)
    assert all(d is not r._threads.data for d, _ in datas.values())


def test_plain_method_calls_go_straight_to_the_caller_and_the_rest_to_the_method():
    """The Robot's dynamics and frame methods are ``_call.Method`` descriptors: a call with the
    arrays positional (and the frame, reference) and known keywords takes this thread's caller
    directly; every other form of call runs the method's Python body, with the same values and
    errors.  The methods keep their signature and docstring; the descriptor keeps no robot alive."""
    import inspect

    from composedyn.dynamics.compiled._call import Method

    r = cd.from_urdf(random_urdf(10, 7, damping=True, friction=True, armature=True))
    other = cd.from_urdf(random_urdf(11, 7, damping=True, friction=True, armature=True))
    q, qd, qdd = np.random.default_rng(10).uniform(-1, 1, (3, r.dof))
    names = ("inverse_dynamics", "forward_dynamics", "mass_matrix", "coriolis_matrix", "gravity_torques",
             "bias_torques", "frame_pose", "jacobian", "frame_velocity", "frame_acceleration")
    for name in names:
        m = vars(cd.Robot)[name]
        assert type(m) is Method and m.__doc__ == m.general.__doc__ and m.__name__ == name
        assert inspect.signature(getattr(r, name)) == inspect.signature(m.general.__get__(r))
    general = {name: vars(cd.Robot)[name].general for name in names}
    lists = q.tolist(), qd.tolist(), qdd.tolist()  # the general path (the caller takes no lists)
    for robot in (r, other, r):  # two robots in turn: each call serves its own
        assert close(robot.inverse_dynamics(q, qd, qdd), general["inverse_dynamics"](robot, *lists))
        assert close(robot.inverse_dynamics(q, qd, qdd, friction=False),
                              general["inverse_dynamics"](robot, *lists, friction=False))
        assert close(robot.forward_dynamics(q, qd, qdd), general["forward_dynamics"](robot, *lists))
        assert close(robot.mass_matrix(q), general["mass_matrix"](robot, lists[0]))
        assert close(robot.gravity_torques(q), general["gravity_torques"](robot, lists[0]))
        assert close(robot.coriolis_matrix(q, qd), general["coriolis_matrix"](robot, *lists[:2]))
        assert close(robot.bias_torques(q, qd), general["bias_torques"](robot, *lists[:2]))
    frame = r.frame_names[-1]
    want = general["jacobian"](r, lists[0], frame, "local")
    for got in (r.jacobian(q, frame, "local"), r.jacobian(q, frame=frame, reference="local"),
                r.jacobian(q, reference="local", frame=frame), cd.Robot.jacobian(r, q, frame, "local")):
        assert close(got, want)
    assert close(r.jacobian(q, frame), general["jacobian"](r, lists[0], frame))
    assert close(r.frame_pose(q, frame=frame), general["frame_pose"](r, lists[0], frame))
    assert close(r.frame_velocity(q, qd, frame, "local"), general["frame_velocity"](r, *lists[:2], frame, "local"))
    assert close(r.frame_acceleration(q, qd, qdd, frame), general["frame_acceleration"](r, *lists, frame))
    # other forms: positional f_ext and friction, out=, the general path's errors
    out = np.empty(r.dof)
    assert r.inverse_dynamics(q, qd, qdd, None, False, out) is out
    assert close(out, general["inverse_dynamics"](r, *lists, friction=False))
    assert r.inverse_dynamics(q, qd, qdd, out=out) is out and close(out, r.inverse_dynamics(*lists))
    for call in (lambda: r.inverse_dynamics(q, qd, qdd, smooth_friction=0.1), lambda: r.gravity_torques(q, out=out),
                 lambda: r.jacobian(q, frame, frame=frame), lambda: r.mass_matrix()):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(Exception, match="no_such_frame"):
        r.jacobian(q, "no_such_frame")
    with pytest.raises(ValueError, match="sideways"):
        r.jacobian(q, frame, "sideways")
    with pytest.raises(ValueError):
        r.mass_matrix(q[:-1])
    gone = weakref.ref(other)
    other.mass_matrix(q)  # the last robot served: kept only weakly
    del other
    gc.collect()
    assert gone() is None

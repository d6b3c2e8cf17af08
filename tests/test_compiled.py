"""The compiled (numba) kernels equal the NumPy reference to 1e-12.

Random branched trees (revolute, continuous, prismatic and fixed joints) with
damping, Coulomb friction, armature and external forces; one sample and
batches (serial and parallel loops); the ``Robot`` methods through the
dispatcher, the lean ``robot.fast`` entry, singular mass matrices, and the
backend switch (``COMPOSEDYN_BACKEND=numpy``).  Speed is measured in
``bench/speed.py``, never here.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch
from composedyn.dynamics.compiled import parallel
from composedyn.dynamics.pivots import model_pivot_floors
from composedyn.dynamics.reference import coriolis, crba, forward, rnea
from composedyn.dynamics.schema import add_joint, add_link, new_graph
from random_robots import FIXED_SEEDS, random_urdf

pytest.importorskip("numba")
TOL = 1e-12


def rel(a, b) -> float:
    """max |a - b| / max(1, max |b|)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) if b.size else 0.0


@pytest.fixture
def numpy_backend():
    """Run a block with the NumPy backend, then restore."""
    class Switch:
        def __enter__(self):
            dispatch.set_backend("numpy")

        def __exit__(self, *exc):
            dispatch.set_backend("auto")
    yield Switch()
    dispatch.set_backend("auto")


def robot_for(seed: int, n: int):
    return cd.from_urdf(random_urdf(seed, n, damping=True, friction=True, armature=True))


def reference_forward(model, q, qd, tau, fw, smooth=None):
    from composedyn.dynamics.reference.friction import friction_torques

    h = rnea.rnea(model, q, qd, np.zeros_like(q), f_world=fw) + friction_torques(model, qd, smooth=smooth)
    return forward.solve_mass(model, crba.crba(model, q) + np.diag(model.armature), tau - h)


CASES = [FIXED_SEEDS[i] for i in (0, 2, 4, 6, 9)]  # 1 to 30 joints


@pytest.mark.parametrize("seed,n", CASES)
@pytest.mark.parametrize("batch", [(), (3,)])
def test_kernels_equal_numpy(seed, n, batch):
    robot = robot_for(seed, n)
    m = robot.model
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-2, 2, (3,) + batch + (m.n,))
    qd.flat[0] = 0.0  # Coulomb friction at rest
    fw = rng.normal(size=batch + (m.n, 6))
    assert dispatch.backend() == "numba"
    from composedyn.dynamics.reference.friction import friction_torques

    def call(name, *inputs, **arguments):
        return dispatch.call(name, m, robot.arrays, *inputs, **arguments)
    arm = m.armature * qdd
    assert rel(call("inverse_dynamics", q, qd, qdd, friction=0), rnea.rnea(m, q, qd, qdd) + arm) < TOL
    assert rel(call("inverse_dynamics", q, qd, qdd, f_world=fw, friction=0),
               rnea.rnea(m, q, qd, qdd, f_world=fw) + arm) < TOL
    z = np.zeros_like(q)
    assert rel(call("inverse_dynamics", q, z, z, friction=0), rnea.rnea(m, q, z, z)) < TOL  # gravity
    assert rel(call("gravity_torques", q), rnea.rnea(m, q, z, z)) < TOL
    assert rel(call("bias_torques", q, qd), rnea.rnea(m, q, qd, z)) < TOL
    full = rnea.rnea(m, q, qd, qdd, f_world=fw) + arm + friction_torques(m, qd)
    assert rel(call("inverse_dynamics", q, qd, qdd, f_world=fw), full) < TOL
    assert rel(call("mass_matrix", q), crba.crba(m, q) + np.diag(m.armature)) < TOL
    assert rel(call("coriolis_matrix", q, qd), coriolis.coriolis_matrix(m, q, qd)) < TOL
    for f, smooth in ((None, None), (fw, 0.05)):
        qdd_c = call("forward_dynamics", q, qd, qdd, f_world=f, smooth_friction=smooth)
        assert rel(qdd_c, reference_forward(m, q, qd, qdd, f, smooth)) < TOL


def test_joint_terms_on_both_backends(numpy_backend):
    robot = robot_for(3, 5)
    m = robot.model
    q, qd, qdd = np.random.default_rng(2).uniform(-2, 2, (3, 2, m.n))
    ref = robot.inverse_dynamics(q, qd, qdd)
    assert rel(dispatch.call("inverse_dynamics", m, robot.arrays, q, qd, qdd), ref) < TOL
    with numpy_backend:
        assert rel(dispatch.call("inverse_dynamics", m, robot.arrays, q, qd, qdd), ref) < TOL
        assert rel(dispatch.call("mass_matrix", m, None, q), robot.mass_matrix(q)) < TOL


def test_parallel_loop_equals_numpy(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_WORK", 1)
    monkeypatch.setattr(parallel, "PARALLEL_IDLE", -math.inf)  # whatever the load
    robot = robot_for(5, 10)
    m = robot.model
    rng = np.random.default_rng(1)
    N = 70  # more samples than prange blocks
    q, qd, qdd = rng.uniform(-2, 2, (3, N, m.n))
    assert rel(dispatch.call("inverse_dynamics", m, None, q, qd, qdd, friction=0),
               rnea.rnea(m, q, qd, qdd) + m.armature * qdd) < TOL
    assert "inverse_dynamics_loop_parallel" in dispatch.compile_times()


@pytest.mark.parametrize("seed,n", [FIXED_SEEDS[3], FIXED_SEEDS[8]])
def test_robot_methods_equal_numpy_path(seed, n, numpy_backend):
    robot = robot_for(seed, n)
    rng = np.random.default_rng(seed)
    Q = rng.uniform(-2, 2, (4, robot.dof))
    qd, qdd = rng.uniform(-2, 2, (2, robot.dof))
    link = robot.model.body_names[-1]
    f_ext = {link: rng.normal(size=6)}
    calls = [("inverse_dynamics", (Q, qd, qdd), {"f_ext": f_ext}), ("inverse_dynamics", (Q[0], qd, qdd), {}),
             ("forward_dynamics", (Q, qd, qdd), {"f_ext": f_ext}), ("forward_dynamics", (Q[0], qd, qdd), {}),
             ("mass_matrix", (Q,), {}), ("coriolis_matrix", (Q, qd), {}), ("gravity_torques", (Q[0],), {}),
             ("bias_torques", (Q, qd), {})]
    for name, args, kw in calls:
        fast = getattr(robot, name)(*args, **kw)
        with numpy_backend:
            ref = getattr(robot, name)(*args, **kw)
        assert fast.shape == ref.shape and rel(fast, ref) < TOL, name


def test_robot_methods_use_the_compiled_path(monkeypatch, numpy_backend):
    robot = robot_for(4, 7)
    q = np.full(robot.dof, 0.3)

    def refuse(*a, **k):
        raise AssertionError("NumPy reference called")
    for mod, name in ((rnea, "rnea"), (crba, "crba"), (coriolis, "coriolis_matrix"), (forward, "solve_mass")):
        monkeypatch.setattr(mod, name, refuse)
    robot.inverse_dynamics(q, q, q)
    robot.mass_matrix(q)
    robot.coriolis_matrix(q, q)
    robot.gravity_torques(q)
    assert {"inverse_dynamics_entry", "mass_matrix_entry", "coriolis_matrix_entry"} <= set(dispatch.compile_times())
    with numpy_backend, pytest.raises(AssertionError, match="NumPy reference"):
        robot.inverse_dynamics(q, q, q)


def test_backend_env_var_and_lazy_numba_import():
    code = ("import sys, composedyn; from composedyn.dynamics import dispatch; "
            "print('numba' in sys.modules, dispatch.backend())")
    env = dict(os.environ, COMPOSEDYN_BACKEND="numpy")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "numpy"]
    env["COMPOSEDYN_BACKEND"] = "fortran"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "COMPOSEDYN_BACKEND must be" in out.stderr
    with pytest.raises(ValueError, match="backend"):
        dispatch.set_backend("fortran")


def test_fast_entry_equals_robot_methods():
    robot = robot_for(6, 13)
    fd = robot.fast
    fd.warm_up()
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, robot.dof))
    Q = rng.uniform(-2, 2, (5, robot.dof))
    assert rel(fd.inverse_dynamics(q, qd, qdd), robot.inverse_dynamics(q, qd, qdd)) < TOL
    assert rel(fd.inverse_dynamics(Q, Q, Q), robot.inverse_dynamics(Q, Q, Q)) < TOL
    assert rel(fd.mass_matrix(q), robot.mass_matrix(q)) < TOL
    assert rel(fd.mass_matrix(Q), robot.mass_matrix(Q)) < TOL
    assert rel(fd.coriolis_matrix(q, qd), robot.coriolis_matrix(q, qd)) < TOL
    assert rel(fd.gravity_torques(q), robot.gravity_torques(q)) < TOL
    assert rel(fd.bias_torques(q, qd), robot.bias_torques(q, qd)) < TOL
    assert rel(fd.forward_dynamics(q, qd, qdd), robot.forward_dynamics(q, qd, qdd)) < TOL
    out = np.empty(robot.dof)
    assert fd.inverse_dynamics(q, qd, qdd, out=out) is out


def massless_tip_robot():
    """Two revolute joints; the second moves a massless link: M is singular."""
    g = new_graph("tip")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    add_link(g, "l2")
    add_joint(g, "j1", "base", "l1", axis=(0, 0, 1))
    add_joint(g, "j2", "l1", "l2", axis=(0, 1, 0), origin=np.eye(4))
    return cd.from_graph(g)


def test_singular_mass_matrix_raises_model_error(numpy_backend):
    robot = massless_tip_robot()
    z = np.zeros(2)
    with numpy_backend, pytest.raises(cd.ModelError, match="j2"):
        robot.forward_dynamics(z, z, z)
    M = crba.crba(robot.model, z)
    with pytest.raises(cd.ModelError) as ref:
        forward.solve_mass(robot.model, M, z, model_pivot_floors(robot.model))
    for q in (z, np.zeros((3, 2))):
        with pytest.raises(cd.ModelError, match="j2"):
            robot.forward_dynamics(q, z, z)
        with pytest.raises(cd.ModelError) as got:  # the compiled path reports the reference message
            dispatch.call("forward_dynamics", robot.model, None, q, z, z)
        assert str(got.value) == str(ref.value)
        with pytest.raises(cd.ModelError, match="j2"):
            robot.fast.forward_dynamics(q, z if q.ndim == 1 else q, z if q.ndim == 1 else q)


def test_robot_without_moving_joints():
    g = new_graph("welded")
    add_link(g, "base")
    add_link(g, "l1", mass=1.0, inertia=np.eye(3) * 0.1)
    add_joint(g, "j", "base", "l1", type="fixed")
    robot = cd.from_graph(g)
    z, Z = np.zeros(0), np.zeros((3, 0))
    assert robot.inverse_dynamics(z, z, z).shape == (0,) and robot.mass_matrix(Z).shape == (3, 0, 0)
    assert robot.forward_dynamics(Z, Z, Z).shape == (3, 0) and robot.warm_up() == {}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_loops_serially(monkeypatch):
    """GNU OpenMP aborts a forked child entering a parallel region: children loop serially."""
    monkeypatch.setattr(parallel, "PARALLEL_WORK", 1)
    monkeypatch.setattr(parallel, "PARALLEL_IDLE", -math.inf)  # whatever the load
    robot = robot_for(2, 3)
    Q = np.zeros((70, robot.dof))
    tau = robot.inverse_dynamics(Q, Q, Q)  # parallel loop in this process
    assert parallel.use_parallel(10)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        ok = not parallel.use_parallel(10) and np.allclose(robot.inverse_dynamics(Q, Q, Q), tau)
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(r, 1) == b"1"


def test_threads_loop_serially(monkeypatch):
    import threading

    monkeypatch.setattr(parallel, "PARALLEL_IDLE", -math.inf)  # whatever the load

    seen = []
    t = threading.Thread(target=lambda: seen.append(parallel.use_parallel(10**9)))
    t.start()
    t.join()
    assert seen == [False] and parallel.use_parallel(10**9)


LEAN = ("inverse_dynamics", "mass_matrix", "coriolis_matrix", "gravity_torques", "bias_torques", "forward_dynamics")


def lean_calls(robot, q, qd, qdd):
    """Every method with a lean path, called with (q, qd, qdd) as given."""
    return [robot.inverse_dynamics(q, qd, qdd), robot.mass_matrix(q), robot.coriolis_matrix(q, qd),
            robot.gravity_torques(q), robot.bias_torques(q, qd), robot.forward_dynamics(q, qd, qdd),
            robot.forward_dynamics(q, qd, qdd, smooth_friction=0.01),
            robot.inverse_dynamics(q, qd, qdd, friction=False), robot.forward_dynamics(q, qd, qdd, friction=False)]


def count_calls(monkeypatch, owner, names) -> dict:
    """Replace each attribute ``names`` of ``owner`` by a wrapper counting its calls; the counts."""
    counts = dict.fromkeys(names, 0)
    for name in names:
        real = getattr(owner, name)

        def spy(*args, _name=name, _real=real):
            counts[_name] += 1
            return _real(*args)
        monkeypatch.setattr(owner, name, spy)
    return counts


def spy_lean_calls(monkeypatch, names) -> dict:
    """Per quantity of ``names``, the calls of the C callers (``data.Data``, built after this)
    by the methods that gave a result rather than None (the general path's turn).  The general
    path's own calls of a caller (a sample it converted to float64 vectors) are not counted."""
    from composedyn.dynamics.data import Data

    counts = dict.fromkeys(names, 0)
    real = Data.__missing__

    def missing(self, name):
        caller = real(self, name)

        def spy(*args, **kwargs):
            result = caller(*args, **kwargs)
            if sys._getframe(1).f_globals.get("__name__") != dispatch.__name__:
                counts[name] = counts.get(name, 0) + (result is not None)
            return result
        self[name] = spy
        return spy
    monkeypatch.setattr(Data, "__missing__", missing)
    return counts


@pytest.fixture
def spy_entries(monkeypatch):
    """Served calls per dynamics entry (:func:`spy_lean_calls`)."""
    return spy_lean_calls(monkeypatch, LEAN)


def test_public_methods_take_the_lean_path_for_plain_vectors(spy_entries):
    """Plain float64 (n,) vectors go through the checked compiled entries, whose
    results equal the general path (lists, NumPy backend) to 1e-12."""
    robot = robot_for(3, 7)
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.normal(size=(3, robot.dof))
    qd[1] = 0.0  # Coulomb friction at rest
    lean = lean_calls(robot, q, qd, qdd)
    assert all(spy_entries[name] >= 1 for name in LEAN), spy_entries
    general = lean_calls(robot, q.tolist(), qd.tolist(), qdd.tolist())
    dispatch.set_backend("numpy")
    try:
        reference = lean_calls(robot, q, qd, qdd)
    finally:
        dispatch.set_backend("auto")
    for a, b, c in zip(lean, general, reference):
        assert rel(a, b) < TOL and rel(a, c) < TOL


@pytest.mark.parametrize("convert", [
    lambda x: x.astype(np.float32), lambda x: x.astype(np.int64), lambda x: np.repeat(x, 2)[::2],
    lambda x: x[None], lambda x: x.tolist()], ids=["float32", "int", "strided", "batch", "list"])
def test_other_inputs_fall_back_to_the_general_path(convert):
    """Input the checked entries do not take gives the general path's result."""
    robot = robot_for(4, 5)
    rng = np.random.default_rng(3)
    q, qd, qdd = np.round(rng.normal(size=(3, robot.dof)), 1)
    q_, qd_, qdd_ = (convert(x) for x in (q, qd, qdd))
    ref = lean_calls(robot, np.asarray(q_, float), np.asarray(qd_, float), np.asarray(qdd_, float))
    for a, b in zip(lean_calls(robot, q_, qd_, qdd_), ref):
        assert np.shape(a) == np.shape(b) and rel(a, b) < TOL


def test_lean_path_still_rejects_bad_vectors_by_name():
    """NaN, inf and wrong lengths raise the general path's ValueError naming the argument."""
    robot = robot_for(3, 7)
    n = robot.dof
    q, qd, qdd = np.random.default_rng(2).normal(size=(3, n))
    bad = qd.copy()
    bad[n // 2] = np.nan
    with pytest.raises(ValueError, match="qd"):
        robot.inverse_dynamics(q, bad, qdd)
    with pytest.raises(ValueError, match="q "):
        robot.mass_matrix(np.full(n, np.inf))
    with pytest.raises(ValueError, match="tau"):
        robot.forward_dynamics(q, qd, np.full(n, -np.inf))
    with pytest.raises(ValueError, match="qd"):
        robot.coriolis_matrix(q, qd[:-1])
    with pytest.raises(ValueError, match="q"):
        robot.gravity_torques(np.zeros(n + 1))


def test_lean_path_is_not_used_with_dependent_mimic_joints(spy_entries):
    """With mimic joints as dependent coordinates the projection needs the general path."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(random_urdf(5, 6, p_fixed=0.0))
    js = [j for j in root.iter("joint") if j.get("type") in ("revolute", "continuous")]
    ET.SubElement(js[-1], "mimic", joint=js[0].get("name"), multiplier="0.5")
    robot = cd.from_urdf(ET.tostring(root, encoding="unicode"))
    q = np.zeros(robot.dof)
    robot.inverse_dynamics(q, q, q)
    assert robot.dof < len(robot.all_joint_names) and sum(spy_entries.values()) == 0


def test_fast_single_samples_never_reach_python_and_nan_gives_nan(monkeypatch):
    """robot.fast serves a plain single sample in C (its Python fallbacks are not called),
    NaN and inf included (an all-NaN result); a wrong length goes to the fallback, which
    raises ValueError naming the shapes, and a batch to the batch loop."""
    from composedyn.dynamics.compiled.fast import FastDynamics

    spied = count_calls(monkeypatch, FastDynamics, ("_general",))  # the fallback of every method
    robot = robot_for(3, 7)
    fd, n = robot.fast, robot.dof
    q = np.random.default_rng(5).normal(size=n)
    assert rel(fd.mass_matrix(q), robot.mass_matrix(q)) < TOL
    assert rel(fd.forward_dynamics(q, q, q, smooth_friction=0.01),
               robot.forward_dynamics(q, q, q, smooth_friction=0.01)) < TOL
    bad = q.copy()
    bad[0] = np.nan
    assert np.isnan(fd.inverse_dynamics(bad, q, q)).all() and np.isnan(fd.forward_dynamics(q, q, -np.inf * q)).all()
    assert np.isnan(fd.mass_matrix(bad)).all() and np.isnan(fd.gravity_torques(np.full(n, np.nan))).all()
    assert sum(spied.values()) == 0, spied
    with pytest.raises(ValueError, match=rf"\({n},\) or \(N, {n}\).*q float64 \({n + 1},\)"):
        fd.mass_matrix(np.zeros(n + 1))
    Q = np.stack([q, bad])
    M = fd.mass_matrix(Q)
    assert spied["_general"] == 2 and rel(M[0], robot.mass_matrix(q)) < TOL and np.isnan(M[1]).all()


def test_strided_vectors_take_the_lean_path_and_other_dtypes_skip_it(spy_entries):
    """A strided float64 view (a column of a state array) goes through the entry; a
    float32 vector goes to the general path without calling the entry (whose type
    error would cost ~0.1 ms per call); both give the float64 result."""
    robot = robot_for(4, 5)
    n = robot.dof
    states = np.random.default_rng(7).normal(size=(n, 3))
    q = states[:, 0]
    assert not q.flags.c_contiguous
    ref = robot.inverse_dynamics(q.copy(), q.copy(), q.copy())
    calls = spy_entries["inverse_dynamics"]
    assert rel(robot.inverse_dynamics(q, q, q), ref) < TOL and spy_entries["inverse_dynamics"] == calls + 1
    q32 = q.astype(np.float32)
    ref32 = robot.inverse_dynamics(q32.astype(float), q32.astype(float), q32.astype(float))
    calls = spy_entries["inverse_dynamics"]
    assert rel(robot.inverse_dynamics(q32, q32, q32), ref32) < TOL and spy_entries["inverse_dynamics"] == calls

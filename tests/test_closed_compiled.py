"""Closed chains: the compiled kernel against the NumPy reference, the reduced Coriolis matrix,
long simulations, and the Delta robot against Pinocchio's constraintDynamics.

Oracles: the NumPy reference path (backend "numpy"); finite differences of the reduced mass
matrix (Christoffel symbols); energy along an unactuated simulation; Pinocchio's
``constraintDynamics`` with one CONTACT_3D constraint per loop on the same URDF.
"""

import contextlib

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import dispatch

CHAINS = ["fourbar", "slider_crank", "fivebar", "delta"]


@contextlib.contextmanager
def numpy_backend():
    before = dispatch.backend()
    dispatch.set_backend("numpy")
    try:
        yield
    finally:
        dispatch.set_backend(before)


def state(ch, seed, batch=()):
    rng = np.random.default_rng(seed)
    q = ch._last[ch._ind] + rng.uniform(-0.1, 0.1, batch + (ch.dof,))
    qd, x = rng.uniform(-1, 1, (2,) + batch + (ch.dof,))
    return q, qd, x


def evaluations(ch, q, qd, x):
    start = ch._last.copy()
    out = {}
    for name, f in [("assemble", lambda: ch.assemble(q)), ("velocities", lambda: ch.velocities(q, qd)),
                    ("accelerations", lambda: ch.accelerations(q, qd, x)),
                    ("inverse_dynamics", lambda: ch.inverse_dynamics(q, qd, x)),
                    ("inverse_rigid", lambda: ch.inverse_dynamics(q, qd, x, friction=False)),
                    ("forward_dynamics", lambda: ch.forward_dynamics(q, qd, x)),
                    ("constraint_forces", lambda: ch.constraint_forces(q, qd, x)),
                    ("mass_matrix", lambda: ch.mass_matrix(q))]:
        ch._last = start
        out[name] = f()
    ch._last = start
    return out


@pytest.mark.parametrize("name", CHAINS)
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
def test_compiled_equals_reference(name, batch):
    """Every compiled quantity equals the NumPy reference to 1e-10 (relative to its size)."""
    ch = cd.load_closed_chain(name)
    assert ch._kernels  # the compiled route is the one taken
    q, qd, x = state(ch, 7, batch)
    fast = evaluations(ch, q, qd, x)
    assert ch._fast("inverse_dynamics", q, qd, x) is not None
    with numpy_backend():
        assert ch._fast("inverse_dynamics", q, qd, x) is None
        ref = evaluations(ch, q, qd, x)
    for key in ref:
        assert fast[key].shape == ref[key].shape, key
        scale = max(1.0, np.abs(ref[key]).max())
        assert np.abs(fast[key] - ref[key]).max() < 1e-10 * scale, key


def test_compiled_accepts_closed_all_joint_positions_and_falls_back_on_bad_input():
    ch = cd.load_closed_chain("fourbar")
    q, qd, x = state(ch, 1)
    qa = ch.assemble(q)
    assert np.allclose(ch.inverse_dynamics(qa, qd, x), ch.inverse_dynamics(q, qd, x), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="does not close the loops"):
        ch.inverse_dynamics(qa + 0.1, qd, x)
    with pytest.raises(ValueError):
        ch.forward_dynamics(q, np.array([np.nan]), x)
    with pytest.raises(cd.ModelError, match="cannot close"):
        cd.load_closed_chain("fourbar", independent=["rocker_joint"]).assemble(np.array([3.1]))


@pytest.mark.parametrize("name", CHAINS)
def test_forward_inverse_identity_compiled(name):
    ch = cd.load_closed_chain(name)
    q, qd, x = state(ch, 3, (4,))
    tau = ch.inverse_dynamics(q, qd, x)
    assert np.allclose(ch.forward_dynamics(q, qd, tau), x, rtol=1e-9, atol=1e-9)
    for s in range(4):
        assert np.allclose(ch.forward_dynamics(q[s], qd[s], tau[s]), x[s], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", CHAINS)
def test_reduced_coriolis_is_the_christoffel_matrix_of_the_reduced_inertia(name):
    """C_red from central differences of M_red(q_I): C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_k;
    hence dM_red/dt - 2 C_red skew and C_red qd = bias - gravity."""
    ch = cd.load_closed_chain(name)
    q, qd, _ = state(ch, 5)
    k, eps = ch.dof, 1e-6
    dM = np.array([(ch.mass_matrix(q + eps * e) - ch.mass_matrix(q - eps * e)) / (2 * eps) for e in np.eye(k)])
    Cfd = 0.5 * (np.einsum("kij,k->ij", dM, qd) + np.einsum("jik,k->ij", dM, qd) - np.einsum("ijk,k->ij", dM, qd))
    C = ch.coriolis_matrix(q, qd)
    scale = max(1.0, np.abs(C).max())
    assert np.abs(C - Cfd).max() < 1e-6 * scale
    Md = np.einsum("kij,k->ij", dM, qd)
    S = Md - 2 * C
    assert np.abs(S + S.T).max() < 1e-6 * scale
    assert np.allclose(C @ qd, ch.bias_torques(q, qd) - ch.gravity_torques(q), rtol=1e-10, atol=1e-10)


def test_fourbar_unactuated_five_seconds_conserves_energy_and_closure():
    """Four-bar released from rest at crank angle -1.2 rad without friction torque input: 5 s of free
    motion; energy drift relative to the kinetic energy scale below 1e-6, loop closed to 1e-10."""
    ch = cd.load_closed_chain("fourbar")
    t = np.linspace(0.0, 5.0, 501)
    sim = cd.simulate(ch, [-1.2], [0.0], t, friction=False)
    assert np.ptp(sim.q) > 1.0
    assert sim.energy_drift < 1e-6
    qa = ch.assemble(sim.q)
    assert np.abs(ch.constraint(qa)).max() < 1e-10
    J = ch.constraint_jacobian(qa)
    assert np.abs(np.einsum("tij,tj->ti", J, ch.velocities(sim.q, sim.qd))).max() < 1e-10


def pinocchio_constraints(ch):
    """Pinocchio model of ch's spanning tree with a CONTACT_3D constraint per loop."""
    from pin_oracle import PinPair, loop_constraints, pin

    pp = PinPair(ch.robot, ch.robot.model.source)
    return (pin, pp, *loop_constraints(pp, ch.robot, ch.loops))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delta_matches_pinocchio_constraint_dynamics(seed):
    """The Delta's tree accelerations and the 18 closure forces (world axes) equal Pinocchio's
    constraintDynamics on the same URDF with the hip torques applied."""
    ch = cd.load_closed_chain("delta")
    pin, pp, cms, cds = pinocchio_constraints(ch)
    rng = np.random.default_rng(seed)
    q = ch._last[ch._ind] + rng.uniform(-0.3, 0.3, 3)
    qd, tau = rng.uniform(-2, 2, 3), rng.uniform(-20, 20, 3)
    qdd = ch.forward_dynamics(q, qd, tau)
    tau_tree = np.zeros(ch.robot.dof)
    tau_tree[ch._ind] = tau
    a = pin.constraintDynamics(pp.model, pp.data, pp.q(ch.assemble(q)), pp.v(ch.velocities(q, qd)), pp.v(tau_tree),
                               cms, cds, pin.ProximalSettings(1e-14, 1e-10, 200))
    assert np.allclose(a, pp.v(ch.accelerations(q, qd, qdd)), rtol=1e-8, atol=1e-8)
    lam = np.concatenate([c.contact_force.vector[:3] for c in cds])
    assert np.allclose(lam, ch.constraint_forces(q, qd, qdd), rtol=1e-8, atol=1e-8)
    assert np.allclose(ch.inverse_dynamics(q, qd, qdd), tau, rtol=1e-9, atol=1e-9)


def test_fourbar_matches_pinocchio_constraint_dynamics_compiled():
    """The compiled four-bar path against Pinocchio (the planar loop as a 3-D point constraint:
    its y row is redundant; the proximal solver copes)."""
    ch = cd.load_closed_chain("fourbar")
    pin, pp, cms, cds = pinocchio_constraints(ch)
    for th, w, tau in ((0.4, 1.0, 2.0), (2.0, -1.5, -1.0), (-1.0, 0.3, 0.5)):
        q, qd, tau = np.array([th]), np.array([w]), np.array([tau])
        qdd = ch.forward_dynamics(q, qd, tau)
        tt = np.zeros(3)
        tt[ch._ind] = tau
        a = pin.constraintDynamics(pp.model, pp.data, pp.q(ch.assemble(q)), pp.v(ch.velocities(q, qd)), pp.v(tt),
                                   cms, cds, pin.ProximalSettings(1e-14, 1e-8, 200))
        assert np.allclose(a, pp.v(ch.accelerations(q, qd, qdd)), rtol=1e-9, atol=1e-9)
        assert np.allclose(cds[0].contact_force.vector[[0, 2]], ch.constraint_forces(q, qd, qdd), rtol=1e-8, atol=1e-8)


def test_delta_is_symmetric_and_bundled():
    """Same hip angles: the plate hangs on the axis and every motor holds the same gravity torque."""
    from composedyn.robots import names

    assert "delta" in names()
    ch = cd.load_closed_chain("delta")
    assert ch.dof == 3 and len(ch.rows) == 18 and ch.robot.dof == 21
    qa = ch.assemble(np.array([0.4, 0.4, 0.4]))
    names_ = ch.all_joint_names
    assert abs(qa[names_.index("plate_x")]) < 1e-12 and abs(qa[names_.index("plate_y")]) < 1e-12
    g = ch.gravity_torques(np.array([0.4, 0.4, 0.4]))
    assert np.ptp(g) < 1e-11 * np.abs(g).max() and g[0] < 0


def test_delta_parallelograms_keep_the_plate_level():
    """Two equal bars on equal, parallel pins close as a parallelogram: wherever the hips go, the
    plate does not turn (its three rotation joints stay 0) and the two bars of a leg stay parallel
    (equal angles at both universal joints) -- the geometric property the Delta is built on."""
    ch = cd.load_closed_chain("delta")
    names_ = ch.all_joint_names
    q = ch._last[ch._ind] + np.random.default_rng(3).uniform(-0.4, 0.4, (20, 3))
    qa = ch.assemble(q)
    rot = qa[:, [names_.index(f"plate_r{a}") for a in "xyz"]]
    assert np.abs(rot).max() < 1e-10
    for leg in "123":
        for j in ("elbow", "swing"):
            assert np.abs(qa[:, names_.index(f"{j}{leg}a")] - qa[:, names_.index(f"{j}{leg}b")]).max() < 1e-10
    assert np.abs(qa[:, [names_.index(f"swing{leg}a") for leg in "123"]]).max() > 0.01  # the legs did shear


def test_delta_geometry_matches_the_published_lengths():
    """Closing the loops puts the plate where the closed-form inverse kinematics of a Delta with the
    published lengths (Alikoç et al., RL5-1450 data set: r0 = 0.330, l1 = 0.420, l2 = 1.055,
    r3 = 0.125 m) says the hips must be: per leg, the pin's midpoint at (r0 + l1 cos t, -l1 sin t)
    in the leg's vertical plane lies at l2 from the midpoint of the plate's two balls
    (Williams, "The Delta Parallel Robot: Kinematics Solutions")."""
    r0, l1, l2, r3 = 0.330, 0.420, 1.055, 0.125
    ch = cd.load_closed_chain("delta")
    names_ = ch.all_joint_names
    hips = ch._last[ch._ind] + np.random.default_rng(5).uniform(-0.4, 0.4, (20, 3))
    p = ch.assemble(hips)[:, [names_.index(f"plate_{a}") for a in "xyz"]]
    for i in range(3):
        phi = 2 * np.pi * i / 3
        r = p[:, 0] * np.cos(phi) + p[:, 1] * np.sin(phi) + r3
        y = -p[:, 0] * np.sin(phi) + p[:, 1] * np.cos(phi)
        t = hips[:, i]
        gap = (r - r0 - l1 * np.cos(t)) ** 2 + y**2 + (p[:, 2] + l1 * np.sin(t)) ** 2 - l2**2
        assert np.abs(gap).max() < 1e-10


@pytest.mark.parametrize("name", ["fourbar", "slider_crank", "fivebar"])
def test_compiled_closure_takes_whole_turns_the_short_way(name):
    """Independent angles 1000 (and -3) turns from the last assembly: the compiled closure succeeds (the
    long way round, 31 000 continuation steps, used to fail and fall back) and equals the NumPy closure
    (angles reduced, the result continuing the start), one sample and a path of samples alike."""
    ch = cd.load_closed_chain(name)
    start = ch._last.copy()
    near = start[ch._ind] + np.array([0.3, -0.1])[:ch.dof]
    far = near + 2 * np.pi * np.array([1000, -3])[:ch.dof]
    path = far + np.linspace(0.0, 0.4, 5)[:, None]
    fast = {}
    for key, q in (("one", far), ("path", path)):
        ch._last = start
        fast[key] = ch._fast("positions", q)
        assert fast[key] is not None, key  # the compiled route closed the loops itself
    ch._last = start
    with numpy_backend():
        ref = {"one": ch.assemble(far)}
        ch._last = start
        ref["path"] = ch.assemble(path)
    ch._last = start
    for key in ref:
        assert np.abs(fast[key] - ref[key]).max() < 1e-9, key
        assert np.array_equal(fast[key][..., ch._ind], far if key == "one" else path)
        dep = fast[key][..., ch._dep]
        assert np.abs(dep - start[ch._dep]).max() < 2 * np.pi  # dependent angles continue the start's
        assert np.abs(ch.constraint(fast[key])).max() <= ch.tol

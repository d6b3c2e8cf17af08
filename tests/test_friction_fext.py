"""Joint friction and external wrenches against independent computations.

Friction: damping * qd + friction * sgn(qd) (tanh(qd / eps) for the smooth
option), with the coefficients read from the URDF XML here, added to
Pinocchio's rigid-body torques.  External wrenches: tau(f_ext) - tau(None) =
-sum_links (Jc^T F + Jw^T T), with the COM and angular Jacobians of every
link (welded and base links included) taken by central differences of
``robot.link_poses``; and M (qdd(f_ext) - qdd(None)) = Jc^T F + Jw^T T.
"""

from __future__ import annotations

import numpy as np
import pytest

from pin_oracle import pin, rel_err
from random_robots import FIXED_SEEDS, random_urdf
from test_dynamics_pinocchio import link_coms, load, pin_pair, xml_root


def xml_friction(urdf: str, names) -> tuple[np.ndarray, np.ndarray]:
    """(damping, Coulomb friction) per joint in ``names`` order, from the URDF XML."""
    dyn = {j.get("name"): j.find("dynamics") for j in xml_root(urdf).iter("joint")}
    get = lambda nm, key: 0.0 if dyn[nm] is None else float(dyn[nm].get(key, 0.0))  # noqa: E731
    return np.array([get(nm, "damping") for nm in names]), np.array([get(nm, "friction") for nm in names])


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[1:8])
def test_friction_matches_pinocchio_plus_independent_friction(seed, n):
    xml = random_urdf(seed, n, damping=True, friction=True, armature=True)
    robot = load(xml)
    pp = pin_pair(robot, xml)
    b, fc = xml_friction(xml, pp.names)  # Pinocchio order
    rng = np.random.default_rng(seed)
    Q, QD, X = rng.uniform(-1.5, 1.5, (3, 4, robot.dof))
    QD[0, 0] = 0.0  # Coulomb friction is 0 at rest (exact sign)
    eps = 0.05
    tau = robot.inverse_dynamics(Q, QD, X)
    tau_off = robot.inverse_dynamics(Q, QD, X, friction=False)
    qdd = robot.forward_dynamics(Q, QD, X)
    qdd_smooth = robot.forward_dynamics(Q, QD, X, smooth_friction=eps)
    qdd_off = robot.forward_dynamics(Q, QD, X, friction=False)
    m, d = pp.model, pp.data
    for s in range(4):
        qp, vp, xp = pp.q(Q[s]), pp.v(QD[s]), pp.v(X[s])
        rigid = pin.rnea(m, d, qp, vp, xp).copy()
        assert rel_err(pp.v(tau[s]), rigid + b * vp + fc * np.sign(vp)) < 1e-9
        assert rel_err(pp.v(tau_off[s]), rigid) < 1e-9
        assert rel_err(pp.v(qdd[s]), pin.aba(m, d, qp, vp, xp - b * vp - fc * np.sign(vp))) < 1e-9
        assert rel_err(pp.v(qdd_smooth[s]), pin.aba(m, d, qp, vp, xp - b * vp - fc * np.tanh(vp / eps))) < 1e-9
        assert rel_err(pp.v(qdd_off[s]), pin.aba(m, d, qp, vp, xp)) < 1e-9
    assert np.abs(tau - tau_off)[1:].min() > 1e-3  # friction did enter where qd != 0


def fd_jacobians(robot, q: np.ndarray, coms: dict, h: float = 1e-6) -> dict:
    """link -> (Jc (3, n), Jw (3, n)): COM and angular Jacobians by central differences."""
    n = robot.dof
    out = {lk: (np.zeros((3, n)), np.zeros((3, n))) for lk in coms}
    for j in range(n):
        e = np.zeros(n)
        e[j] = h
        Tp, Tm, T0 = robot.link_poses(q + e), robot.link_poses(q - e), robot.link_poses(q)
        for lk, c in coms.items():
            cp = Tp[lk][:3, :3] @ c + Tp[lk][:3, 3]
            cm = Tm[lk][:3, :3] @ c + Tm[lk][:3, 3]
            W = (Tp[lk][:3, :3] - Tm[lk][:3, :3]) / (2 * h) @ T0[lk][:3, :3].T  # skew(omega_j)
            out[lk][0][:, j] = (cp - cm) / (2 * h)
            out[lk][1][:, j] = 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])
    return out


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[1:7])
def test_external_wrenches_equal_com_jacobian_transpose(seed, n):
    xml = random_urdf(seed, n, p_fixed=0.6, damping=True, friction=True, armature=True)
    robot = load(xml)
    coms = link_coms(xml)
    assert set(coms) == set(robot.model.link_names)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
    J = fd_jacobians(robot, q, coms)
    F = {lk: rng.normal(size=6) for lk in coms}  # every link: moving, welded and base
    gen = sum(J[lk][0].T @ w[:3] + J[lk][1].T @ w[3:] for lk, w in F.items())
    assert np.abs(gen).max() > 0.1
    tau0 = robot.inverse_dynamics(q, qd, qdd)
    assert rel_err(robot.inverse_dynamics(q, qd, qdd, f_ext=F) - tau0, -gen) < 1e-7
    zero = {lk: np.zeros(6) for lk in coms}
    np.testing.assert_array_equal(robot.inverse_dynamics(q, qd, qdd, f_ext=zero), tau0)
    dq = robot.forward_dynamics(q, qd, qdd, f_ext=F) - robot.forward_dynamics(q, qd, qdd)
    assert rel_err(robot.mass_matrix(q) @ dq, gen) < 1e-7
    for lk in coms:  # one link at a time, to catch a wrench sent to the wrong body
        one = robot.inverse_dynamics(q, qd, qdd, f_ext={lk: F[lk]}) - tau0
        assert rel_err(one, -(J[lk][0].T @ F[lk][:3] + J[lk][1].T @ F[lk][3:])) < 1e-7, lk

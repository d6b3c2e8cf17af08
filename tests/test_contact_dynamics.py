"""Contact inverse dynamics of floating robots (composedyn.floating.contact).

References: Pinocchio's free-flyer model of the same URDF (rnea, frame
Jacobians LOCAL_WORLD_ALIGNED, total mass, centroidal momentum rate) solving the
same least-norm problem with its own arrays; identities on random floating
trees (the equation of motion with the returned torques and wrenches).
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import erd_robots_dir, pin
from random_robots import random_urdf

ROBOTS = {  # example-robot-data URDF, contact frames (point or surface)
    "solo12": ("solo_description/robots/solo12.urdf",
               dict.fromkeys(("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"), "point")),
    "a1": ("a1_description/urdf/a1.urdf", dict.fromkeys(("FR_foot", "FL_foot", "RR_foot", "RL_foot"), "point")),
    "talos": ("talos_data/robots/talos_reduced.urdf", {"left_sole_link": "surface", "right_sole_link": "surface"}),
}


class PinFloating:
    """Pinocchio free-flyer model of a URDF and the joint order map to a FloatingRobot."""

    def __init__(self, robot, path: str):
        self.model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        names = list(self.model.names)[2:]
        assert self.model.nq == robot.nq and sorted(names) == sorted(robot.joint_names)
        self.perm = np.array([robot.joint_names.index(nm) for nm in names])

    def q(self, q):
        return np.r_[q[:7], q[7:][self.perm]]

    def v(self, v):
        return np.r_[v[:6], v[6:][self.perm]]

    def joints(self, x_pin):
        """Pinocchio joint-order vector (n,) -> composedyn order."""
        out = np.empty_like(x_pin)
        out[self.perm] = x_pin
        return out


def _load(key):
    path = str(erd_robots_dir() / ROBOTS[key][0])
    with pytest.warns(cd.ModelWarning) if key == "a1" else _nothing():
        robot = cd.load(path, floating=True)
    return robot, PinFloating(robot, path), ROBOTS[key][1]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _standing(robot, contacts):
    """Neutral joints, base raised so that the contact frames are on the ground z = 0."""
    q = robot.neutral()
    q[2] = -min(robot.frame_pose(q, f)[2, 3] for f in contacts)
    return q


def _pin_least_norm(pp: PinFloating, q, v, a, contacts):
    """The same problem with Pinocchio's arrays: base rows by least norm, torques from the joint rows."""
    m, d = pp.model, pp.data
    qp, vp, ap = pp.q(q), pp.v(v), pp.v(a)
    b = pin.rnea(m, d, qp, vp, ap)
    pin.computeJointJacobians(m, d, qp)
    pin.updateFramePlacements(m, d)
    JT = np.concatenate([pin.getFrameJacobian(m, d, m.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3 if k == "point" else 6]
                         for f, k in contacts.items()]).T
    f = np.linalg.lstsq(JT[:6], b[:6], rcond=None)[0]
    return pp.joints(b[6:] - JT[6:] @ f), f


@pytest.mark.parametrize("key", list(ROBOTS))
def test_standing_robot_vertical_forces_sum_to_weight(key):
    robot, pp, contacts = _load(key)
    q = _standing(robot, contacts)
    zero = np.zeros(robot.nv)
    res = robot.contact_inverse_dynamics(q, zero, zero, contacts, friction=False)
    assert res.feasible and res.status == "ok"
    total = sum(w[:3] for w in res.forces.values())
    weight = pin.computeTotalMass(pp.model) * 9.81
    assert abs(total[2] - weight) < 1e-9 * weight
    for w in res.forces.values():
        assert np.abs(w[:2]).max() < 1e-9 * weight and w[2] > 0  # vertical, pushing
    tau_pin, f_pin = _pin_least_norm(pp, q, zero, zero, contacts)
    assert np.abs(res.tau - tau_pin).max() < 1e-9 * max(1.0, np.abs(tau_pin).max())
    assert np.abs(np.concatenate(list(res.forces.values())) - f_pin).max() < 1e-9 * weight
    cone = robot.contact_inverse_dynamics(q, zero, zero, contacts, friction_coefficient=0.5, friction=False)
    assert cone.feasible and abs(sum(w[2] for w in cone.forces.values()) - weight) < 1e-9 * weight


@pytest.mark.parametrize("key", ["solo12", "talos"])
def test_moving_robot_matches_pinocchio_and_centroidal_balance(key):
    robot, pp, contacts = _load(key)
    rng = np.random.default_rng(3)
    q = robot.random_configuration(seed=4)
    v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    res = robot.contact_inverse_dynamics(q, v, a, contacts, friction=False)
    assert res.feasible
    tau_pin, f_pin = _pin_least_norm(pp, q, v, a, contacts)
    assert np.abs(res.tau - tau_pin).max() < 1e-9 * max(1.0, np.abs(tau_pin).max())
    assert np.abs(np.concatenate(list(res.forces.values())) - f_pin).max() < 1e-9 * max(1.0, np.abs(f_pin).max())
    # Newton-Euler of the whole robot about its COM (Pinocchio's centroidal momentum rate):
    # sum f = dh_lin - m g, sum (p_c - c) x f_c + m_c = dh_ang
    m, d = pp.model, pp.data
    pin.computeCentroidalMomentumTimeVariation(m, d, pp.q(q), pp.v(v), pp.v(a))
    com, mass = d.com[0], pin.computeTotalMass(m)
    force = sum(w[:3] for w in res.forces.values())
    moment = sum(np.cross(robot.frame_pose(q, f)[:3, 3] - com, w[:3]) + (w[3:] if len(w) == 6 else 0)
                 for f, w in res.forces.items())
    scale = mass * 9.81
    assert np.abs(force - (d.dhg.linear - mass * m.gravity.linear)).max() < 1e-9 * scale
    assert np.abs(moment - d.dhg.angular).max() < 1e-9 * scale


def _residual(robot, q, v, a, res, contacts, friction=True):
    """|inverse_dynamics - (S^T tau + sum J^T f)| max, relative to max(1, |inverse_dynamics|)."""
    b = robot.inverse_dynamics(q, v, a, friction=friction)
    rhs = np.zeros(robot.nv)
    rhs[6:] = res.tau
    for f, kind in contacts.items():
        J = robot.jacobian(q, f, "world")[:3 if kind == "point" else 6]
        rhs += J.T @ res.forces[f]
    return np.abs(b - rhs).max() / max(1.0, np.abs(b).max())


@pytest.mark.parametrize("seed", range(6))
def test_random_floating_trees_satisfy_the_equation(seed):
    robot = cd.from_urdf(random_urdf(seed, 4 + 3 * seed, damping=True, friction=True), floating=True)
    rng = np.random.default_rng(seed)
    frames = list(rng.choice(robot.frame_names, size=3, replace=False))
    contacts = {frames[0]: "surface", frames[1]: "point", frames[2]: "point"}
    q = robot.random_configuration(seed=seed)
    v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    for objective in ("forces", "torques"):
        res = robot.contact_inverse_dynamics(q, v, a, contacts, objective=objective)
        assert res.feasible, res
        assert _residual(robot, q, v, a, res, contacts) < 1e-9
    lsq = robot.contact_inverse_dynamics(q, v, a, contacts)
    tor = robot.contact_inverse_dynamics(q, v, a, contacts, objective="torques")
    assert np.linalg.norm(tor.tau) <= np.linalg.norm(lsq.tau) * (1 + 1e-9)
    assert (np.linalg.norm(np.concatenate(list(lsq.forces.values())))
            <= np.linalg.norm(np.concatenate(list(tor.forces.values()))) * (1 + 1e-9))
    # batched over two leading axes = one sample at a time
    Q = robot.random_configuration(size=(2, 3), seed=seed + 1)
    V, A = rng.normal(size=(2, 3, robot.nv)), rng.normal(size=(2, 3, robot.nv))
    batch = robot.contact_inverse_dynamics(Q, V, A, contacts)
    assert batch.tau.shape == (2, 3, robot.dof - 6) and batch.feasible.shape == (2, 3)
    for i, j in np.ndindex(2, 3):
        one = robot.contact_inverse_dynamics(Q[i, j], V[i, j], A[i, j], contacts)
        assert np.abs(batch.tau[i, j] - one.tau).max() < 1e-9 * max(1.0, np.abs(one.tau).max())
        assert batch.feasible[i, j] == one.feasible


def _in_cones(res, mu, normals=None, tol=1e-7):
    for f, w in res.forces.items():
        n = np.array([0.0, 0.0, 1.0]) if normals is None else normals[f]
        fn = w[:3] @ n
        if np.linalg.norm(w[:3] - fn * n) > mu * fn + tol * max(1.0, abs(fn)):
            return False
    return True


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_friction_cones(seed):
    """Normals along the least-norm forces make the cone program feasible for any mu: its
    wrenches then satisfy the equation to 1e-9 and lie in the (tilted) cones, for both objectives."""
    robot = cd.from_urdf(random_urdf(10 + seed, 6 + seed), floating=True)
    rng = np.random.default_rng(seed)
    q = robot.random_configuration(seed=seed)
    v, a = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
    frames = list(rng.choice(robot.frame_names, size=3, replace=False))
    contacts = {frames[0]: "surface", frames[1]: "point", frames[2]: "point"}
    least = robot.contact_inverse_dynamics(q, v, a, contacts)
    assert least.feasible
    normals = {f: w[:3] / np.linalg.norm(w[:3]) for f, w in least.forces.items()}
    taus = {}
    for objective in ("forces", "torques"):
        res = robot.contact_inverse_dynamics(q, v, a, contacts, friction_coefficient=0.3, normal=normals,
                                             objective=objective)
        assert res.feasible, res
        assert _in_cones(res, 0.3, normals)
        assert _residual(robot, q, v, a, res, contacts) < 1e-9
        taus[objective] = np.linalg.norm(res.tau)
    assert taus["torques"] <= taus["forces"] * (1 + 1e-6)


def test_pulling_or_sideways_motion_is_infeasible_with_friction():
    robot, _, contacts = _load("solo12")
    q = _standing(robot, contacts)
    zero = np.zeros(robot.nv)
    down = zero.copy()
    down[2] = -2 * 9.81  # base accelerating down faster than gravity: the feet would have to pull
    pulled = robot.contact_inverse_dynamics(q, zero, down, contacts, friction_coefficient=0.8)
    assert not pulled.feasible and pulled.status == "outside friction cones" and pulled.residual > 1.0
    free = robot.contact_inverse_dynamics(q, zero, down, contacts)  # no cones: least norm pulls
    assert free.feasible and all(w[2] < 0 for w in free.forces.values())
    side = zero.copy()
    side[0] = 0.3 * 9.81  # needs a horizontal force of 0.3 m g: beyond mu = 0.25, within mu = 0.5
    assert robot.contact_inverse_dynamics(q, zero, side, contacts, friction_coefficient=0.25).status == (
        "outside friction cones")
    within = robot.contact_inverse_dynamics(q, zero, side, contacts, friction_coefficient=0.5)
    assert within.feasible and _in_cones(within, 0.5)
    tilted = robot.contact_inverse_dynamics(q, zero, side, contacts, friction_coefficient=0.25,
                                            normal=(np.sin(0.3), 0.0, np.cos(0.3)))
    assert tilted.feasible  # a ground tilted towards +x pushes the robot forward
    one_foot = robot.contact_inverse_dynamics(q, zero, zero, ["FL_FOOT"])
    assert not one_foot.feasible and one_foot.status == "infeasible" and one_foot.residual > 0.01


def test_foot_size_bounds_the_centre_of_pressure_zmp_of_a_pushed_humanoid():
    """Talos standing, whole body accelerated forward (base a_x, joints still): the zero-moment
    point of the contact wrenches is x_com - z_com a_x / g (cart-table model, exact here: no
    change of angular momentum; COM from Pinocchio); each sole's centre of pressure stays in
    its rectangle, and a push beyond the support polygon is outside the contact constraints."""
    robot, pp, soles = _load("talos")
    q = _standing(robot, soles)
    zero = np.zeros(robot.nv)
    foot = (0.1, 0.05)
    com = pin.centerOfMass(pp.model, pp.data, pp.q(q))
    for ax in (0.5, 1.0, 2.0):
        a = zero.copy()
        a[0] = ax
        res = robot.contact_inverse_dynamics(q, zero, a, soles, friction_coefficient=2.0, foot=foot)
        free = robot.contact_inverse_dynamics(q, zero, a, soles, friction_coefficient=2.0)
        assert free.feasible
        zmp = com[0] - com[2] * ax / 9.81
        soles_x = [robot.frame_pose(q, f)[0, 3] for f in soles]
        inside = min(soles_x) - foot[0] <= zmp <= max(soles_x) + foot[0]
        assert res.feasible == inside, (ax, zmp)
        if not inside:
            assert res.status == "outside friction cones" and res.residual > 1.0
            continue
        F = sum(w[:3] for w in res.forces.values())
        M = sum(np.cross(robot.frame_pose(q, f)[:3, 3], w[:3]) + w[3:] for f, w in res.forces.items())
        assert abs(-M[1] / F[2] - zmp) < 1e-9
        for f, w in res.forces.items():
            R = robot.frame_pose(q, f)[:3, :3]
            fl, ml = R.T @ w[:3], R.T @ w[3:]
            assert abs(ml[1]) <= foot[0] * fl[2] + 1e-7 and abs(ml[0]) <= foot[1] * fl[2] + 1e-7
    with pytest.raises(ValueError, match="needs a friction_coefficient"):
        robot.contact_inverse_dynamics(q, zero, zero, soles, foot=foot)
    with pytest.raises(ValueError, match="not surface contacts"):
        robot.contact_inverse_dynamics(q, zero, zero, soles, 0.5, foot={"torso_2_link": foot})


def test_flight_without_contacts():
    robot, _, _ = _load("solo12")
    q, zero = robot.neutral(), np.zeros(robot.nv)
    fall = zero.copy()
    fall[2] = -9.81
    assert robot.contact_inverse_dynamics(q, zero, fall, []).feasible
    still = robot.contact_inverse_dynamics(q, zero, zero, [])
    assert not still.feasible and still.status == "infeasible"
    assert abs(still.residual - robot.mass * 9.81) < 1e-9 * robot.mass * 9.81
    for mu in (None, 0.7):  # friction cones with no contact: a free fall is feasible, with no wrench
        res = robot.contact_inverse_dynamics(q, zero, fall, [], friction_coefficient=mu)
        assert res.status == "ok" and res.feasible and res.residual < 1e-9
        batch = robot.contact_inverse_dynamics(np.stack([q, q]), np.stack([zero, zero]), np.stack([fall, fall]), [],
                                               friction_coefficient=mu)
        assert list(batch.status) == ["ok", "ok"]


def test_bad_input_one_clear_error_each():
    robot, _, contacts = _load("solo12")
    q, zero = robot.neutral(), np.zeros(robot.nv)
    with pytest.raises(ValueError, match="unknown frame 'FL_FOT'.*FL_FOOT"):
        robot.contact_inverse_dynamics(q, zero, zero, ["FL_FOT"])
    with pytest.raises(ValueError, match=r"q has shape \(18,\)"):
        robot.contact_inverse_dynamics(q[:-1], zero, zero, contacts)
    with pytest.raises(ValueError, match=r"a has shape \(19,\)"):
        robot.contact_inverse_dynamics(q, zero, np.zeros(robot.nq), contacts)
    with pytest.raises(ValueError, match="'point' or 'surface'"):
        robot.contact_inverse_dynamics(q, zero, zero, {"FL_FOOT": "line"})
    with pytest.raises(ValueError, match="friction_coefficient"):
        robot.contact_inverse_dynamics(q, zero, zero, contacts, friction_coefficient=-0.5)
    with pytest.raises(ValueError, match="given twice"):
        robot.contact_inverse_dynamics(q, zero, zero, ["FL_FOOT", "FL_FOOT"])
    with pytest.raises(ValueError, match="objective"):
        robot.contact_inverse_dynamics(q, zero, zero, contacts, objective="energy")
    for tolerance in (np.nan, -1e-6, 0.0):  # NaN would make every residual pass
        with pytest.raises(ValueError, match="tolerance must be a number > 0"):
            robot.contact_inverse_dynamics(q, zero, zero, contacts, tolerance=tolerance)
    with pytest.raises(ValueError, match="normal"):
        robot.contact_inverse_dynamics(q, zero, zero, contacts, friction_coefficient=0.5, normal=(0, 0, 0))

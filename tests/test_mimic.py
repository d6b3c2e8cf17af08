"""Mimic joints as dependent coordinates.

Oracles: Pinocchio 4.1 built with ``mimic=True`` (its nv is the reduced
dimension) on the Panda gripper and on random trees with mimic joints added;
and the identity that the reduced equations are the all-joint equations
projected by the mimic Jacobian G (q_all = G q + b).
"""

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import PinPair, erd_urdf, pin, rel_err
from random_robots import random_urdf

TOL = 1e-9


def panda(mode="dependent"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        return cd.from_urdf(erd_urdf("panda"), mimic=mode)


def mimic_tree(seed: int, n: int) -> str:
    """A random URDF tree with some revolute/prismatic joints turned into mimics of earlier ones."""
    rng = np.random.default_rng(seed)
    base = random_urdf(seed, n)
    pm = pin.buildModelFromXML(base)  # Pinocchio wants the mimicked joint parsed before the mimic joint
    order = list(pm.names)
    root = ET.fromstring(base)
    js = sorted((j for j in root.findall("joint") if j.get("type") in ("revolute", "prismatic")),
                key=lambda j: order.index(j.get("name")))
    dep = set(range(len(js) - 1, 0, -3))  # every third joint from the end mimics an earlier independent one
    for k in sorted(dep):
        src = js[int(rng.choice([i for i in range(k) if i not in dep]))]
        ET.SubElement(js[k], "mimic", joint=src.get("name"),
                      multiplier=f"{rng.uniform(-2, 2):.6f}", offset=f"{rng.uniform(-0.5, 0.5):.6f}")
    return ET.tostring(root, encoding="unicode")


def compare_with_pinocchio(robot, urdf, rng, k=3):
    pp = PinPair(robot, urdf)
    assert pp.model.nv == robot.dof < len(robot.all_joint_names)
    m, d = pp.model, pp.data
    for _ in range(k):
        q, qd, qdd = rng.uniform(-1.0, 1.0, (3, robot.dof))
        qp, vp, ap = pp.q(q), pp.v(qd), pp.v(qdd)
        assert rel_err(pp.v(robot.inverse_dynamics(q, qd, qdd, friction=False)), pin.rnea(m, d, qp, vp, ap)) < TOL
        # Pinocchio 4.1's crba with mimic joints drops couplings when the mimicked joint
        # is on another branch (seen on random trees), so take M column by column from its RNEA.
        z, eye = np.zeros(m.nv), np.eye(m.nv)
        Mp = np.array([pin.rnea(m, d, qp, z, eye[j]) - pin.rnea(m, d, qp, z, z) for j in range(m.nv)]).T
        assert rel_err(pp.mat(robot.mass_matrix(q)), Mp) < TOL
        gp = pin.computeGeneralizedGravity(m, d, qp).copy()
        assert rel_err(pp.v(robot.gravity_torques(q)), gp) < TOL
        hp = pin.nonLinearEffects(m, d, qp, vp).copy()
        assert rel_err(pp.v(robot.bias_torques(q, qd)), hp) < TOL
        # Pinocchio 4.1's computeCoriolisMatrix with mimic joints does not satisfy
        # C v = nle - g (checked: error 1e-3 on the Panda), so compare C qd instead.
        assert rel_err(pp.v(robot.coriolis_matrix(q, qd) @ qd), hp - gp) < TOL
        assert rel_err(pp.v(robot.forward_dynamics(q, qd, robot.inverse_dynamics(q, qd, qdd, friction=False),
                                                   friction=False)), ap) < 1e-8


def test_panda_gripper_matches_pinocchio_with_mimic():
    robot = panda()
    assert robot.dof == 8 and robot.mimic_joint_names == ("panda_finger_joint2",)
    assert "panda_finger_joint2" not in robot.joint_names and len(robot.all_joint_names) == 9
    assert robot.limits["lower"].shape == (8,)
    compare_with_pinocchio(robot, erd_urdf("panda"), np.random.default_rng(0))


@pytest.mark.parametrize("seed,n", [(3, 8), (5, 12), (8, 20)])
def test_random_trees_with_mimic_match_pinocchio(seed, n):
    urdf = mimic_tree(seed, n)
    robot = cd.from_urdf(urdf)
    assert robot.mimic_joint_names
    compare_with_pinocchio(robot, urdf, np.random.default_rng(seed))


@pytest.mark.parametrize("seed,n", [(3, 8), (8, 20)])
def test_reduced_equations_are_projected_full_equations(seed, n):
    urdf = mimic_tree(seed, n)
    red, full = cd.from_urdf(urdf), cd.from_urdf(urdf, mimic="independent")
    G = red.mimic_jacobian
    names = full.joint_names
    assert names == red.all_joint_names and G.shape == (full.dof, red.dof)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.uniform(-1, 1, (3, 2, red.dof))  # a batch of 2
    qf, qdf, qddf = red.full_positions(q), qd @ G.T, qdd @ G.T
    # the mimic relation itself: q_r = multiplier * q_source + offset, read from the URDF
    for j in ET.fromstring(urdf).iter("joint"):
        mim = j.find("mimic")
        if mim is not None:
            r, s = names.index(j.get("name")), names.index(mim.get("joint"))
            assert np.allclose(qf[:, r], float(mim.get("multiplier")) * qf[:, s] + float(mim.get("offset")))
    tau_f = full.inverse_dynamics(qf, qdf, qddf)
    assert rel_err(red.inverse_dynamics(q, qd, qdd), tau_f @ G) < TOL
    dep = [names.index(nm) for nm in red.mimic_joint_names]
    assert rel_err(red.mimic_torques(q, qd, qdd), tau_f[:, dep]) < TOL
    assert rel_err(red.mass_matrix(q), G.T @ full.mass_matrix(qf) @ G) < TOL
    assert rel_err(red.coriolis_matrix(q, qd), G.T @ full.coriolis_matrix(qf, qdf) @ G) < TOL
    assert rel_err(red.gravity_torques(q), full.gravity_torques(qf) @ G) < TOL
    assert rel_err(red.energy(q, qd), full.energy(qf, qdf)) < TOL
    tau = red.inverse_dynamics(q, qd, qdd)
    assert rel_err(red.forward_dynamics(q, qd, tau), qdd) < 1e-8
    for link, T in red.link_poses(q).items():
        assert rel_err(T, full.link_poses(qf)[link]) < TOL


def test_christoffel_form_survives_reduction():
    robot, rng, eps = panda(), np.random.default_rng(4), 1e-6
    q, qd = rng.uniform(-1, 1, (2, robot.dof))
    Md = (robot.mass_matrix(q + eps * qd) - robot.mass_matrix(q - eps * qd)) / (2 * eps)
    N = Md - 2 * robot.coriolis_matrix(q, qd)
    assert np.abs(N + N.T).max() < 1e-7 * max(1.0, np.abs(Md).max())


def test_without_mimic_nothing_changes():
    urdf = random_urdf(2, 6)
    a, b = cd.from_urdf(urdf), cd.from_urdf(urdf, mimic="independent")
    assert a.dof == b.dof == len(a.all_joint_names) and a.mimic_joint_names == ()
    q = np.random.default_rng(1).uniform(-1, 1, (3, a.dof))
    assert np.array_equal(a.inverse_dynamics(*q), b.inverse_dynamics(*q))
    assert a.mimic_torques(*q).shape == (0,)


def test_chain_of_mimics_resolves_and_cycle_raises():
    base = random_urdf(4, 7)
    root = ET.fromstring(base)
    js = [j for j in root.findall("joint") if j.get("type") in ("revolute", "prismatic")][:3]
    assert len(js) == 3
    ET.SubElement(js[1], "mimic", joint=js[0].get("name"), multiplier="2", offset="0.1")
    ET.SubElement(js[2], "mimic", joint=js[1].get("name"), multiplier="-3", offset="0.5")
    robot = cd.from_urdf(ET.tostring(root, encoding="unicode"))
    names = robot.all_joint_names
    q = np.random.default_rng(0).uniform(-1, 1, robot.dof)
    qf = robot.full_positions(q)
    a, b, c = (names.index(j.get("name")) for j in js)
    assert np.isclose(qf[b], 2 * qf[a] + 0.1) and np.isclose(qf[c], -3 * qf[b] + 0.5)
    js[0].append(ET.Element("mimic", joint=js[2].get("name")))  # a -> c -> b -> a
    with pytest.raises(cd.ModelError, match="cycle"):
        cd.from_urdf(ET.tostring(root, encoding="unicode"))
    with pytest.raises(ValueError, match="mimic must be one of"):
        cd.from_urdf(base, mimic="sometimes")

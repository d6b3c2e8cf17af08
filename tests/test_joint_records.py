"""``robot.joints`` records and the configuration space of every robot against Pinocchio.

Pinocchio's model of the same URDF (with ``JointModelFreeFlyer`` at the root, or the URDF's own
floating/planar root joint) gives each joint's kind, nq, nv, idx_q and idx_v; its ``neutral``,
``integrate`` and ``difference`` the configuration-space operations.  Pinocchio keeps a continuous
joint as a (cos, sin) pair (nq = 2) where composedyn keeps the angle (nq = 1): there the
configuration indices are compared through that map.
"""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import FreeFlyerPair, PinPair, erd_urdf, pin
from random_robots import random_urdf
from tensor_cases import mimic_urdf

PIN_KIND = {"JointModelFreeFlyer": "free_flyer", "JointModelPlanar": "planar", "JointModelRUBX": "continuous",
            "JointModelRUBY": "continuous", "JointModelRUBZ": "continuous",
            "JointModelRevoluteUnboundedUnaligned": "continuous"}


def _pin_kind(joint) -> str:
    name = joint.shortname()
    if name in PIN_KIND:
        return PIN_KIND[name]
    if name.startswith("JointModelR"):
        return "revolute"
    if name.startswith("JointModelP"):
        return "prismatic"
    raise AssertionError(f"unexpected Pinocchio joint {name}")


def _floating_xml(xml: str, kind: str) -> str:
    joint = (f'<link name="world"/><joint name="base_joint" type="{kind}"><parent link="world"/>'
             '<child link="base"/><origin xyz="0.1 -0.2 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 1"/></joint>')
    return xml.replace("</robot>", joint + "</robot>")


def _compare_records(robot, model, order):
    """``robot.joints`` against Pinocchio's joints ``order`` (ids in robot order): kind, nv, nq
    (continuous: Pinocchio's pair), and the indices rebuilt in the robot's order."""
    records = robot.joints
    assert [j.name for j in records] == [model.names[i] for i in order]
    iq = iv = 0
    for rec, i in zip(records, order):
        pj = model.joints[i]
        assert rec.kind == _pin_kind(pj), (rec.name, pj.shortname())
        assert rec.nv == pj.nv
        assert rec.nq == (1 if rec.kind == "continuous" else pj.nq)
        assert (rec.idx_q, rec.idx_v) == (iq, iv)
        iq, iv = iq + rec.nq, iv + rec.nv
    assert (iq, iv) == (robot.nq, robot.nv)


@pytest.mark.parametrize("key", ["ur5", "panda", "double_pendulum"])
def test_fixed_vendor_records_equal_pinocchio(key):
    path = erd_urdf(key)
    robot = cd.load(path, mimic="independent") if key == "panda" else cd.load(path)
    pp = PinPair(robot, path)
    order = [pp.joint_ids[pp.names.index(name)] for name in robot.joint_names]
    _compare_records(robot, pp.model, order)
    if list(order) == sorted(order):  # same order: Pinocchio's own indices
        assert [j.idx_v for j in robot.joints] == [pp.model.joints[i].idx_v for i in order]


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_records_equal_pinocchio(seed):
    xml = random_urdf(seed, 3 + 2 * seed, p_fixed=0.3)
    robot = cd.from_urdf(xml)
    pp = PinPair(robot, xml)
    _compare_records(robot, pp.model, [pp.joint_ids[pp.names.index(n)] for n in robot.joint_names])
    floating = cd.from_urdf(xml, floating=True)
    fp = FreeFlyerPair(floating, xml, pin.JointModelFreeFlyer())
    names = [fp.model.names[i] for i in range(2, fp.model.njoints)]
    _compare_records(floating, fp.model, [1] + [2 + names.index(n) for n in floating.joint_names])
    base = floating.joints[0]
    assert (base.name, base.kind, base.nq, base.nv, base.idx_q, base.idx_v) == (floating.base.joint, "free_flyer",
                                                                               7, 6, 0, 0)


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_urdf_root_joint_records_equal_pinocchio(kind):
    xml = _floating_xml(random_urdf(3, 6, p_fixed=0.3), kind)
    robot = cd.from_urdf(xml)
    pp = FreeFlyerPair(robot, xml)
    names = [pp.model.names[i] for i in range(2, pp.model.njoints)]
    _compare_records(robot, pp.model, [1] + [2 + names.index(n) for n in robot.joint_names])
    assert robot.joints[0].name == "base_joint"


def test_mimic_records_list_the_coordinates_only():
    robot = cd.from_urdf(mimic_urdf(5, 8))
    assert robot.mimic_joint_names
    assert [j.name for j in robot.joints] == list(robot.joint_names)
    assert [j.idx_v for j in robot.joints] == list(range(robot.dof))
    assert not set(robot.mimic_joint_names) & {j.name for j in robot.joints}


@pytest.mark.parametrize("seed", range(3))
def test_fixed_configuration_space_equals_pinocchio(seed):
    xml = random_urdf(seed + 10, 6, p_fixed=0.2)
    robot = cd.from_urdf(xml)
    pp = PinPair(robot, xml)
    rng = np.random.default_rng(seed)
    q0 = robot.random_configuration(seed=seed)
    v, dt = rng.normal(size=robot.nv), rng.uniform(0.1, 2.0)
    q1 = robot.integrate(q0, v, dt)
    np.testing.assert_allclose(pp.q(q1), pin.integrate(pp.model, pp.q(q0), pp.v(v) * dt), atol=1e-12)
    np.testing.assert_allclose(pp.v(robot.difference(q0, q1)), pin.difference(pp.model, pp.q(q0), pp.q(q1)),
                               atol=1e-10)
    np.testing.assert_allclose(pp.q(robot.neutral()), pin.neutral(pp.model), atol=0)


def test_configuration_space_batches_limits_and_errors():
    robot = cd.load("panda")
    Q = robot.random_configuration((4, 3), seed=7)
    lim = robot.limits
    assert Q.shape == (4, 3, robot.nq)
    assert np.all(Q >= lim["lower"]) and np.all(Q <= lim["upper"])
    np.testing.assert_array_equal(Q, robot.random_configuration((4, 3), seed=7))
    V = np.random.default_rng(0).normal(size=(3, robot.nv))
    back = robot.difference(Q, robot.integrate(Q, V, 0.3))
    np.testing.assert_allclose(back, np.broadcast_to(0.3 * V, Q.shape), atol=1e-12)
    with pytest.raises(ValueError, match="dt"):
        robot.integrate(Q[0, 0], V[0], dt="soon")
    with pytest.raises(ValueError, match="q0"):
        robot.difference(np.zeros(3), Q[0, 0])
    with pytest.raises(ValueError, match="v"):
        robot.integrate(Q[0, 0], np.zeros(2))


def test_records_need_no_array_api_package():
    """The core install has no array-api-compat ([torch]/[jax] extras): the records still load."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['array_api_compat'] = None\n"
            "import composedyn as cd\n"
            "print(len(cd.load('panda').joints))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "7"

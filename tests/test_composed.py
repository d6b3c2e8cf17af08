"""The composed vectors of Giacaglia & Lamas equal the recursive algorithms.

Mass matrix a_γα = PL_α ∘ vω_γ (CRBA), brackets (Coriolis matrix in
Christoffel form), Q = FN ∘ vω for gravity, external wrenches and pure link
torques (RNEA with the corresponding loads), on vendor URDFs and on random
branched trees with revolute, prismatic and fixed joints.
"""

import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics.reference.composed import gravity_FN, wrench_FN
from composedyn.dynamics.reference.kinematics import body_poses, link_poses
from composedyn.dynamics.reference.spatial import rotation_about
from composedyn.dynamics.schema import add_joint, add_link, new_graph
from pin_oracle import erd_urdf

TOL = 1e-10


def random_tree(seed: int, n: int) -> cd.Robot:
    """A random branched tree of n moving joints plus a few fixed joints."""
    rng = np.random.default_rng(seed)
    g = new_graph(f"random{seed}", gravity=rng.normal(size=3) * 5)
    add_link(g, "base", mass=1.0, inertia=np.eye(3))
    links = ["base"]
    k = 0
    while k < n:
        parent = links[rng.integers(len(links))]
        jtype = rng.choice(["revolute", "continuous", "prismatic", "fixed"], p=[0.4, 0.2, 0.25, 0.15])
        name = f"l{len(links)}"
        x, y, z = rng.uniform(0.01, 0.2, 3)  # principal moments (x+y, y+z, z+x) obey the triangle inequality
        Rp = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = Rp @ np.diag([x + y, y + z, z + x]) @ Rp.T
        add_link(g, name, mass=rng.uniform(0.1, 3), com=rng.normal(size=3) * 0.2, inertia=inertia)
        T = np.eye(4)
        ax = rng.normal(size=3)
        T[:3, :3] = rotation_about(ax / np.linalg.norm(ax), rng.uniform(-3, 3))
        T[:3, 3] = rng.normal(size=3) * 0.4
        add_joint(g, f"j{len(links)}", parent, name, type=str(jtype), origin=T, axis=rng.normal(size=3))
        links.append(name)
        k += jtype != "fixed"
    return cd.from_graph(g)


def robots():
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        for key in ("ur5", "panda", "talos"):
            # composed vectors span all joints
            out.append(pytest.param(lambda key=key: cd.from_urdf(erd_urdf(key), mimic="independent"), id=key))
    for seed, n in [(1, 1), (2, 4), (3, 9), (4, 17)]:
        out.append(pytest.param(lambda s=seed, n=n: random_tree(s, n), id=f"random{seed}-{n}"))
    return out


def rel(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


@pytest.mark.parametrize("make", robots())
def test_composed_vectors_equal_recursive_algorithms(make):
    robot = make()
    m = robot.model
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-2, 2, (2, 3, robot.dof))  # a batch of 3 states
    cv = robot.composed_vectors(q)
    n = robot.dof
    assert cv.vw.shape == (3, n, 6 * n) and cv.XY.shape == (3, n, n, 6 * n)
    M = robot.mass_matrix(q) - np.diag(m.armature)
    assert rel(cv.mass_matrix, M) < TOL
    assert rel(cv.coriolis_matrix(qd), robot.coriolis_matrix(q, qd)) < TOL
    h = robot.bias_torques(q, qd) - robot.gravity_torques(q)
    assert rel(cv.velocity_terms(qd), h) < TOL
    assert rel(-cv.generalized_forces(gravity_FN(m, cv)), robot.gravity_torques(q)) < TOL


@pytest.mark.parametrize("make", robots())
def test_generalized_forces_of_wrenches_equal_rnea(make):
    robot = make()
    m = robot.model
    rng = np.random.default_rng(11)
    q = rng.uniform(-2, 2, robot.dof)
    names = [m.link_names[k] for k in rng.choice(len(m.link_names), size=3)]
    f_ext = {name: rng.normal(size=6) for name in names}
    cv = robot.composed_vectors(q)
    Q = cv.generalized_forces(wrench_FN(m, cv, link_poses(m, *body_poses(m, q)), f_ext))
    z = np.zeros(robot.dof)
    tau_loaded = robot.inverse_dynamics(q, z, z, f_ext=f_ext, friction=False)
    assert rel(Q, robot.gravity_torques(q) - tau_loaded) < TOL


def test_link_torques_map_through_angular_velocities():
    """A pure torque N on one body gives Q_γ = N · ω_γi (eq. 2.23)."""
    robot = random_tree(5, 6)
    rng = np.random.default_rng(3)
    q = rng.uniform(-2, 2, robot.dof)
    cv = robot.composed_vectors(q)
    i = robot.dof - 1
    FN = np.zeros((robot.dof, 6))
    FN[i, 3:] = rng.normal(size=3)
    name = robot.model.body_names[i]
    z = np.zeros(robot.dof)
    f_ext = {name: np.concatenate([np.zeros(3), FN[i, 3:]])}
    expected = robot.gravity_torques(q) - robot.inverse_dynamics(q, z, z, f_ext=f_ext, friction=False)
    assert rel(cv.generalized_forces(FN), expected) < TOL

"""Graph -> Model compilation: depth-first order, fixed-joint merging, massless inertia."""

import numpy as np

import composedyn as cd
from composedyn.dynamics.model import compile_graph
from composedyn.dynamics.schema import add_joint, add_link, new_graph


def _spd(rng):
    Q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    x, y, z = rng.uniform(0.1, 1.0, 3)
    return Q @ np.diag([x + y, y + z, z + x]) @ Q.T


def test_massless_link_keeps_rotational_inertia():
    rng = np.random.default_rng(0)
    I = _spd(rng)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    g = new_graph("spinner")
    add_link(g, "base")
    add_link(g, "rotor", mass=0.0, inertia=I)
    add_joint(g, "spin", "base", "rotor", axis=axis)
    robot = cd.from_graph(g)
    M = robot.mass_matrix(rng.uniform(-3, 3, 1))
    assert np.isclose(M[0, 0], axis @ I @ axis, rtol=1e-12)


def test_fixed_links_merge_into_parent_body_with_parallel_axis():
    """A body split over two links welded together has the dynamics of the single merged link."""
    rng = np.random.default_rng(1)
    m1, m2 = 1.3, 0.7
    c1, c2 = rng.normal(size=3) * 0.2, rng.normal(size=3) * 0.2
    I1, I2 = _spd(rng), _spd(rng)
    T = np.eye(4)
    T[:3, 3] = [0.3, -0.1, 0.2]
    split = new_graph("split")
    add_link(split, "base")
    add_link(split, "a", mass=m1, com=c1, inertia=I1)
    add_link(split, "b", mass=m2, com=c2, inertia=I2)
    add_joint(split, "j", "base", "a", axis=[0, 1, 0])
    add_joint(split, "weld", "a", "b", type="fixed", origin=T)
    # Same body written as one link: combine by hand with the parallel-axis theorem.
    c2a = c2 + T[:3, 3]
    m = m1 + m2
    c = (m1 * c1 + m2 * c2a) / m
    def pa(mi, d):
        return mi * (d @ d * np.eye(3) - np.outer(d, d))
    Ic = I1 + pa(m1, c1 - c) + I2 + pa(m2, c2a - c)
    one = new_graph("one")
    add_link(one, "base")
    add_link(one, "a", mass=m, com=c, inertia=Ic)
    add_joint(one, "j", "base", "a", axis=[0, 1, 0])
    ra, rb = cd.from_graph(split), cd.from_graph(one)
    q, qd, qdd = rng.normal(size=(3, 1))
    assert np.allclose(ra.inverse_dynamics(q, qd, qdd), rb.inverse_dynamics(q, qd, qdd), rtol=1e-12, atol=1e-12)
    assert ra.model.link_names == ("base", "a", "b") and ra.dof == 1


def test_depth_first_order_follows_insertion_and_parents_precede_children():
    g = new_graph("tree")
    for name in ["base", "a", "b", "c", "d", "e"]:
        add_link(g, name, mass=1.0, inertia=np.eye(3) * 0.1)
    add_joint(g, "ja", "base", "a")
    add_joint(g, "jd", "base", "d")
    add_joint(g, "jb", "a", "b")
    add_joint(g, "jc", "a", "c")
    add_joint(g, "je", "d", "e")
    m = compile_graph(g)
    assert m.joint_names == ("ja", "jb", "jc", "jd", "je")
    assert all(m.parent[i] < i for i in range(m.n))
    assert list(m.parent) == [-1, 0, 0, -1, 3]

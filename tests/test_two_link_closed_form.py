"""Two-link planar arm: a Lagrangian derived here with SymPy equals the numeric results.

The arm moves in the vertical x-z plane: both joints turn about +y, link 1
has length l1, the centres of mass sit at lc1, lc2 along each link's x axis,
gravity is -g0 z.  The Lagrangian L = T - V is written by hand from the COM
positions and angular velocities; M, C (Christoffel symbols), g and tau
follow by differentiation, and Lagrange's equations are checked to reproduce
tau = M qdd + C qd + g symbolically.  The same arm is written as a URDF with
random parameter values, loaded, and compared at random states.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import composedyn as cd

q1, q2, qd1, qd2, qdd1, qdd2 = sp.symbols("q1 q2 qd1 qd2 qdd1 qdd2", real=True)
l1, lc1, lc2, m1, m2, I1, I2, g0, b1, b2, fc1, fc2, ar1, ar2 = sp.symbols(
    "l1 lc1 lc2 m1 m2 I1 I2 g0 b1 b2 fc1 fc2 ar1 ar2", positive=True)
PARAMS = (l1, lc1, lc2, m1, m2, I1, I2, g0, b1, b2, fc1, fc2, ar1, ar2)


def Ry(a):
    """Right-handed rotation about +y."""
    return sp.Matrix([[sp.cos(a), 0, sp.sin(a)], [0, 1, 0], [-sp.sin(a), 0, sp.cos(a)]])


@pytest.fixture(scope="module")
def closed_form():
    """Lambdified (M, C, g, tau, T, V) of the arm, tau including friction and armature."""
    q, qd, qdd = sp.Matrix([q1, q2]), sp.Matrix([qd1, qd2]), sp.Matrix([qdd1, qdd2])
    ex = sp.Matrix([1, 0, 0])
    c1 = Ry(q1) * ex * lc1
    c2 = Ry(q1) * ex * l1 + Ry(q1 + q2) * ex * lc2
    v1, v2 = c1.jacobian(q) * qd, c2.jacobian(q) * qd
    T = (m1 * v1.dot(v1) + m2 * v2.dot(v2) + I1 * qd1**2 + I2 * (qd1 + qd2) ** 2
         + ar1 * qd1**2 + ar2 * qd2**2) / 2
    V = g0 * (m1 * c1[2] + m2 * c2[2])
    L = T - V
    # Lagrange: d/dt dL/dqd - dL/dq, with d/dt along (q, qd, qdd)
    dLdqd = sp.Matrix([L.diff(x) for x in qd])
    ddt = dLdqd.jacobian(q) * qd + dLdqd.jacobian(qd) * qdd
    lagrange = ddt - sp.Matrix([L.diff(x) for x in q])
    M = sp.hessian(T, qd)
    C = sp.zeros(2, 2)
    for i in range(2):
        for j in range(2):
            C[i, j] = sum((M[i, j].diff(q[k]) + M[i, k].diff(q[j]) - M[j, k].diff(q[i])) * qd[k] for k in range(2)) / 2
    g = sp.Matrix([V.diff(x) for x in q])
    assert sp.simplify(lagrange - (M * qdd + C * qd + g)) == sp.zeros(2, 1)
    friction = sp.Matrix([b1 * qd1 + fc1 * sp.sign(qd1), b2 * qd2 + fc2 * sp.sign(qd2)])
    tau = M * qdd + C * qd + g + friction
    args = (q1, q2, qd1, qd2, qdd1, qdd2) + PARAMS
    return {k: sp.lambdify(args, e, "numpy") for k, e in dict(M=M, C=C, g=g, tau=tau, T=T, V=V).items()}


def two_link_urdf(p: dict) -> str:
    def link(name, m, lc, I):
        return (f'<link name="{name}"><inertial><origin xyz="{lc!r} 0 0"/><mass value="{m!r}"/>'
                f'<inertia ixx="{I!r}" ixy="0" ixz="0" iyy="{I!r}" iyz="0" izz="{I!r}"/></inertial></link>')

    def joint(name, parent, child, x, b, f, a):
        return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{x!r} 0 0"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="5"/>'
                f'<dynamics damping="{b!r}" friction="{f!r}" armature="{a!r}"/></joint>')

    return ('<robot name="two_link"><link name="base"/>' + link("link1", p["m1"], p["lc1"], p["I1"])
            + link("link2", p["m2"], p["lc2"], p["I2"])
            + joint("shoulder", "base", "link1", 0.0, p["b1"], p["fc1"], p["ar1"])
            + joint("elbow", "link1", "link2", p["l1"], p["b2"], p["fc2"], p["ar2"]) + "</robot>")


@pytest.mark.parametrize("seed", range(4))
def test_two_link_equals_sympy_lagrangian(closed_form, seed):
    rng = np.random.default_rng(seed)
    p = {s.name: float(rng.uniform(0.1, 2.0)) for s in PARAMS}
    p["g0"] = 9.81
    robot = cd.from_urdf(two_link_urdf(p))
    assert robot.joint_names == ("shoulder", "elbow")
    vals = tuple(p[s.name] for s in PARAMS)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2.0, 2.0, (3, 2))
        ref = {k: np.asarray(f(*q, *qd, *qdd, *vals), dtype=float) for k, f in closed_form.items()}
        np.testing.assert_allclose(robot.mass_matrix(q), ref["M"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(robot.coriolis_matrix(q, qd), ref["C"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(robot.gravity_torques(q), ref["g"].ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(robot.inverse_dynamics(q, qd, qdd), ref["tau"].ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(robot.forward_dynamics(q, qd, ref["tau"].ravel()), qdd, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(robot.kinetic_energy(q, qd), ref["T"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(robot.potential_energy(q), ref["V"], rtol=1e-12, atol=1e-12)

"""The array-API algorithms on random trees that mix every joint kind, against Pinocchio.

Each tree is built in Pinocchio (``JointModelFreeFlyer``, ``JointModelSpherical``, ``JointModelUniversal``,
``JointModelHelicalUnaligned``, ``JointModelPlanar``, revolute and prismatic joints about arbitrary axes), with
free-flyer and spherical joints in the middle of the tree (a parent body and children), and converted to an
``ArrayModel`` (:mod:`composedyn.testing.pinocchio_trees`).  Inverse dynamics, the mass matrix, forward
dynamics, bias and gravity torques, the Coriolis matrix, frame poses, Jacobians, velocities and classical
accelerations, the centre of mass and its Jacobian, the centroidal momentum matrix, energies, the regressor and
the configuration-space operations equal Pinocchio's to 1e-9 (single samples, batches, torch tensors); a passive
simulation on the configuration space (Runge-Kutta in the chart of ``integrate``, whose Jacobian the joint model
gives) conserves energy, and without gravity a free-floating tree conserves its momentum.
"""

from __future__ import annotations

from dataclasses import replace

import array_api_compat
import numpy as np
import pytest
import torch

from composedyn.dynamics import array_api as A
from composedyn.dynamics.array_api import joints as J
from composedyn.testing.pinocchio_trees import array_model, random_tree
from pin_oracle import pin

TOL = 1e-9
XP = array_api_compat.array_namespace(np.zeros(1))
# name: (seed, bodies, root kind, kinds); the seeds give free-flyer and spherical joints inside the tree
TREES = {
    "floating": (6, 16, "free_flyer", J.KINDS),
    "fixed": (7, 16, None, J.KINDS),
    "planar_root": (3, 16, "planar", J.KINDS),
    "no_universal": (5, 12, "free_flyer", tuple(k for k in J.KINDS if k != "universal")),
}
MIXING_EVERY_KIND = ("floating", "fixed", "planar_root")


class Tree:
    def __init__(self, name: str):
        seed, bodies, root, kinds = TREES[name]
        self.rng = np.random.default_rng(seed)
        self.model = random_tree(self.rng, bodies, kinds=kinds, root=root)
        self.data = self.model.createData()
        self.am = array_model(self.model, name=f"{name} tree")
        self.bm = A.on(self.am, XP)

    def q(self) -> np.ndarray:
        return np.concatenate([J.random_configuration(j, self.rng) for j in self.am.joints])

    def v(self) -> np.ndarray:
        return self.rng.normal(size=self.model.nv)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        upper = np.triu(pin.crba(self.model, self.data, q))
        return upper + np.triu(upper, 1).T


@pytest.fixture(scope="module", params=list(TREES))
def tree(request) -> Tree:
    return Tree(request.param)


def _err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def test_trees_mix_every_kind_with_multi_dof_joints_inside():
    inside = set()
    for name in MIXING_EVERY_KIND:
        am = Tree(name).am
        assert {j.kind for j in am.joints} == set(J.KINDS) - {"continuous"}, name  # continuous: revolute's code
        for i, joint in enumerate(am.joints):
            if am.parent[i] >= 0 and i in am.parent:
                inside.add(joint.kind)
    assert {"free_flyer", "spherical", "universal", "planar"} <= inside


def test_dynamics_equal_pinocchio(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    for _ in range(3):
        q, v, a = tree.q(), tree.v(), tree.v()
        tau = pin.rnea(m, d, q, v, a).copy()
        assert _err(A.inverse_dynamics(bm, q, v, a, friction=False), tau) < TOL
        assert _err(A.mass_matrix(bm, q), tree.mass_matrix(q)) < TOL
        assert _err(A.forward_dynamics(bm, q, v, tau, friction=False), pin.aba(m, d, q, v, tau)) < TOL
        assert _err(A.forward_dynamics(bm, q, v, tau, friction=False), a) < TOL
        assert _err(A.bias_torques(bm, q, v), pin.nonLinearEffects(m, d, q, v)) < TOL
        assert _err(A.gravity_torques(bm, q), pin.computeGeneralizedGravity(m, d, q)) < TOL


def _coriolis_identities(tree: Tree) -> tuple[float, float]:
    """Errors of C qd = (bias - gravity torques) and of dM/dt = C + C^T (central differences along integrate)."""
    m, d, bm = tree.model, tree.data, tree.bm
    q, v = tree.q(), tree.v()
    c = A.coriolis_matrix(bm, q, v)
    h = 1e-6
    mdot = (tree.mass_matrix(pin.integrate(m, q, h * v)) - tree.mass_matrix(pin.integrate(m, q, -h * v))) / (2 * h)
    velocity_terms = pin.nonLinearEffects(m, d, q, v) - pin.computeGeneralizedGravity(m, d, q)
    return _err(c @ v, velocity_terms), _err(c + c.T, mdot)


@pytest.mark.parametrize("name", list(TREES))
def test_coriolis_matrix_identities(name):
    velocity_terms, mdot = _coriolis_identities(Tree(name))
    assert velocity_terms < TOL
    assert mdot < 1e-7


def test_coriolis_matrix_equals_pinocchio_without_universal_joints():
    """Pinocchio's computeCoriolisMatrix leaves out the rate of a universal joint's motion subspace, which turns in
    the child frame (its C qd differs from nonLinearEffects - gravity there), so it is the oracle only for trees
    without them; the identities above cover every tree."""
    tree = Tree("no_universal")
    m, d = tree.model, tree.data
    for _ in range(2):
        q, v = tree.q(), tree.v()
        assert _err(A.coriolis_matrix(tree.bm, q, v), pin.computeCoriolisMatrix(m, d, q, v)) < TOL


def test_frames_equal_pinocchio(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    q, v, a = tree.q(), tree.v(), tree.v()
    pin.forwardKinematics(m, d, q, v, a)
    pin.updateFramePlacements(m, d)
    pin.computeJointJacobians(m, d, q)
    world, local = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED, pin.ReferenceFrame.LOCAL
    names = [f.name for f in m.frames]
    assert set(names) <= set(tree.am.frame_names)
    for fid, name in enumerate(names):
        assert _err(A.frame_pose(bm, q, name), d.oMf[fid].homogeneous) < TOL, name
        for ref, pin_ref in (("world", world), ("local", local)):
            jac = pin.getFrameJacobian(m, d, fid, pin_ref)
            assert _err(A.jacobian(bm, q, name, reference=ref), jac) < TOL, (name, ref)
            assert _err(A.frame_velocity(bm, q, v, name, reference=ref), jac @ v) < TOL, (name, ref)
            acc = pin.getFrameClassicalAcceleration(m, d, fid, pin_ref).vector
            assert _err(A.frame_acceleration(bm, q, v, a, name, reference=ref), acc) < TOL, (name, ref)


def test_centre_of_mass_momentum_energy_equal_pinocchio(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    q, v = tree.q(), tree.v()
    assert _err(A.center_of_mass(bm, q), pin.centerOfMass(m, d, q)) < TOL
    assert _err(A.com_jacobian(bm, q), pin.jacobianCenterOfMass(m, d, q)) < TOL
    assert _err(A.centroidal_momentum_matrix(bm, q), pin.computeCentroidalMap(m, d, q)) < TOL
    assert _err(A.kinetic_energy(bm, q, v), pin.computeKineticEnergy(m, d, q, v)) < TOL
    assert _err(A.potential_energy(bm, q), pin.computePotentialEnergy(m, d, q)) < TOL


def test_regressor_equals_pinocchio(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    q, v, a = tree.q(), tree.v(), tree.v()
    y = A.regressor(bm, q, v, a)
    assert _err(y, pin.computeJointTorqueRegressor(m, d, q, v, a)) < TOL
    assert _err(y @ tree.am.inertia.reshape(-1), pin.rnea(m, d, q, v, a)) < TOL


def test_configuration_space_equals_pinocchio(tree):
    m, bm = tree.model, tree.bm
    assert _err(A.neutral(bm), pin.neutral(m)) == 0.0
    for _ in range(3):
        q, q1, v = tree.q(), tree.q(), tree.v()
        assert _err(A.integrate(bm, q, v, 0.7), pin.integrate(m, q, 0.7 * v)) < TOL
        assert _err(A.difference(bm, q, q1), pin.difference(m, q, q1)) < TOL


def test_batches_equal_pinocchio_loop(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    qs = np.stack([tree.q() for _ in range(6)]).reshape(2, 3, -1)
    vs, accs = tree.rng.normal(size=(2, 3, m.nv)), tree.rng.normal(size=(2, 3, m.nv))
    tau = A.inverse_dynamics(bm, qs, vs, accs, friction=False)
    mass = A.mass_matrix(bm, qs)
    assert tau.shape == (2, 3, m.nv) and mass.shape == (2, 3, m.nv, m.nv)
    for k in np.ndindex(2, 3):
        assert _err(tau[k], pin.rnea(m, d, qs[k], vs[k], accs[k])) < TOL
        assert _err(mass[k], tree.mass_matrix(qs[k])) < TOL
    qdd = A.forward_dynamics(bm, qs, vs, tau, friction=False)
    assert _err(qdd, accs) < TOL


def test_task_space_batches_equal_pinocchio_loop(tree):
    m, d, bm = tree.model, tree.data, tree.bm
    frame = f"body{len(tree.am.joints) // 2}"
    fid = m.getFrameId(frame)
    qs = np.stack([tree.q() for _ in range(4)]).reshape(2, 2, -1)
    vs = tree.rng.normal(size=(2, 2, m.nv))
    jac = A.jacobian(bm, qs, frame, reference="world")
    cmm = A.centroidal_momentum_matrix(bm, qs)
    moved = A.integrate(bm, qs, vs, 0.3)
    assert jac.shape == (2, 2, 6, m.nv) and cmm.shape == (2, 2, 6, m.nv) and moved.shape == qs.shape
    for k in np.ndindex(2, 2):
        world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        assert _err(jac[k], pin.computeFrameJacobian(m, d, qs[k], fid, world)) < TOL
        assert _err(cmm[k], pin.computeCentroidalMap(m, d, qs[k])) < TOL
        assert _err(moved[k], pin.integrate(m, qs[k], 0.3 * vs[k])) < TOL
    assert _err(A.difference(bm, qs, moved), 0.3 * vs) < 1e-10


def test_torch_equals_pinocchio():
    """The same source on torch tensors (the JAX path runs the same functions: tests/test_array_api_joints.py)."""
    tree = Tree("floating")
    m, d = tree.model, tree.data
    bm = A.on(tree.am, array_api_compat.array_namespace(torch.zeros(1)))
    qs = np.stack([tree.q() for _ in range(3)])
    vs, accs = tree.rng.normal(size=(3, m.nv)), tree.rng.normal(size=(3, m.nv))
    q, v, a = (torch.asarray(x, dtype=torch.float64) for x in (qs, vs, accs))
    tau = A.inverse_dynamics(bm, q, v, a, friction=False)
    mass = A.mass_matrix(bm, q)
    qdd = A.forward_dynamics(bm, q, v, tau, friction=False)
    for k in range(3):
        assert _err(tau[k].numpy(), pin.rnea(m, d, qs[k], vs[k], accs[k])) < TOL
        assert _err(mass[k].numpy(), tree.mass_matrix(qs[k])) < TOL
        assert _err(qdd[k].numpy(), accs[k]) < TOL


# ------------------------------------------------------------------------------- simulation on the configuration space


def _integrate(am, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.concatenate(
        [J.integrate(XP, j, q[j.idx_q : j.idx_q + j.nq], v[j.idx_v : j.idx_v + j.nv]) for j in am.joints]
    )


def _chart_rate(am, delta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """d delta/dt for q = integrate(q0, delta) moving with velocity v: the integrate Jacobian solved per joint."""
    out = []
    for j in am.joints:
        dj, vj = delta[j.idx_v : j.idx_v + j.nv], v[j.idx_v : j.idx_v + j.nv]
        out.append(np.linalg.solve(J.integrate_jacobian(XP, j, J.neutral(j), dj), vj))
    return np.concatenate(out)


def _rk4_step(bm, q0: np.ndarray, v0: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """One passive Runge-Kutta step in the chart delta -> integrate(q0, delta)."""
    am, zero = bm.am, np.zeros(v0.shape)

    def rate(delta, v):
        acc = A.forward_dynamics(bm, _integrate(am, q0, delta), v, zero, friction=False)
        return _chart_rate(am, delta, v), acc

    k1 = rate(zero, v0)
    k2 = rate(dt / 2 * k1[0], v0 + dt / 2 * k1[1])
    k3 = rate(dt / 2 * k2[0], v0 + dt / 2 * k2[1])
    k4 = rate(dt * k3[0], v0 + dt * k3[1])
    delta = dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
    return _integrate(am, q0, delta), v0 + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])


def _energy(model, data, q, v) -> float:
    return pin.computeKineticEnergy(model, data, q, v) + pin.computePotentialEnergy(model, data, q)


@pytest.mark.parametrize("name", ["floating", "fixed"])
def test_simulation_conserves_energy(name):
    tree = Tree(name)
    q, v = tree.q(), tree.v()
    e0 = _energy(tree.model, tree.data, q, v)
    scale = pin.computeKineticEnergy(tree.model, tree.data, q, v) + abs(e0)
    for _ in range(40):
        q, v = _rk4_step(tree.bm, q, v, 2e-3)
    assert abs(_energy(tree.model, tree.data, q, v) - e0) < 1e-7 * scale
    assert pin.computeKineticEnergy(tree.model, tree.data, q, v) > 1e-3 * scale  # it moved


def test_free_floating_tree_conserves_momentum():
    tree = Tree("floating")
    tree.model.gravity.linear = np.zeros(3)
    bm = A.on(replace(tree.am, gravity=np.zeros(3)), XP)
    q, v = tree.q(), tree.v()
    h0 = pin.computeCentroidalMomentum(tree.model, tree.data, q, v).vector.copy()
    for _ in range(40):
        q, v = _rk4_step(bm, q, v, 2e-3)
    h1 = pin.computeCentroidalMomentum(tree.model, tree.data, q, v).vector
    assert _err(h1, h0) < 1e-8
    assert _energy(tree.model, tree.data, q, v) > 0


@pytest.mark.parametrize("sample", ["humanoid", "manipulator"])
def test_pinocchio_sample_models_convert(sample):
    """Pinocchio's own sample models (axis-aligned revolute joints, a free-flyer root) through the converter."""
    model = pin.buildSampleModelHumanoid() if sample == "humanoid" else pin.buildSampleModelManipulator()
    data, rng = model.createData(), np.random.default_rng(8)
    am = array_model(model, name=sample)
    assert {j.kind for j in am.joints} == ({"free_flyer", "revolute"} if sample == "humanoid" else {"revolute"})
    bm = A.on(am, XP)
    q = np.concatenate([J.random_configuration(j, rng) for j in am.joints])
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    assert _err(A.inverse_dynamics(bm, q, v, a, friction=False), pin.rnea(model, data, q, v, a)) < TOL
    pin.framesForwardKinematics(model, data, q)
    for fid, frame in enumerate(model.frames):
        assert _err(A.frame_pose(bm, q, frame.name), data.oMf[fid].homogeneous) < TOL, frame.name


def test_float32_mass_matrix_form_equals_pinocchio(tree):
    """The mass matrix's float32 form (:func:`crba.local_mass_matrix`: body-frame composites and diagonal
    blocks, off-diagonal blocks in root axes with the moment moved along summed joint offsets) on every joint
    kind, several columns and free-flyers inside the tree: run in float64 it equals Pinocchio's CRBA to 1e-9;
    the float32 mass matrix is within 1e-6 of Pinocchio's relative to its largest entry."""
    from composedyn.dynamics.array_api import crba
    from composedyn.dynamics.array_api.kinematics import tree as kinematics

    qs = np.stack([tree.q() for _ in range(4)])
    want = np.stack([tree.mass_matrix(q) for q in qs])
    assert _err(crba.local_mass_matrix(tree.bm, *kinematics(tree.bm, qs), None, len(qs)), want) < TOL
    M32 = A.mass_matrix(A.on(tree.am, XP, dtype=np.float32), qs.astype(np.float32))
    assert M32.dtype == np.float32
    assert np.abs(M32 - want).max() < 1e-6 * np.abs(want).max()

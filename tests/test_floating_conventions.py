"""Free-flyer convention conversions (Pinocchio, MuJoCo, Drake).

- round trips through all three conventions on random batches (exact for q, ~1e-15 for v and a);
- velocities and accelerations of every convention against central finite differences along a
  smooth base trajectory given in closed form (position and an unnormalised quaternion of time),
  with the rotation matrices from SciPy's independent quaternion code;
- generalised forces: the power tau . v is unchanged and tau_t = T^{-T} tau_s;
- MuJoCo as the oracle (``tests/mujoco_oracle.py``): the same URDF (Solo12 and A1 of
  example-robot-data, random trees with continuous, revolute, prismatic and fixed joints) in MuJoCo
  with a free root joint and in Pinocchio with ``JointModelFreeFlyer``; after the conversion of
  Pinocchio's state, MuJoCo's mass matrix (``mj_fullM``), bias forces (``qfrc_bias``) and inverse
  dynamics (``mj_inverse``) equal Pinocchio's ``crba``, ``nonLinearEffects`` and ``rnea`` carried
  to MuJoCo's coordinates, to 1e-9 relative (joints matched by name); so do composedyn's own
  floating robot's ``inverse_dynamics`` and ``mass_matrix``;
- bad input: one ValueError each.
"""

from __future__ import annotations

import itertools
import re
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import composedyn as cd
from composedyn.floating.conventions import CONVENTIONS, convert_floating, convert_floating_forces
from mujoco_oracle import load_floating, mass_matrix, urdf_link_masses
from pin_oracle import erd_robots_dir, pin, rel_err
from random_robots import random_urdf

ORACLE_TOL = 1e-9
FD_TOL = 1e-8
VENDOR = {"solo12": "solo_description/robots/solo12.urdf", "a1": "a1_description/urdf/a1.urdf"}
RANDOM = {"random_5_10": (5, 10), "random_8_22": (8, 22), "random_3_5": (3, 5)}


def random_state(rng: np.random.Generator, batch: tuple, n: int):
    """Pinocchio (q, v, a) of a floating base with ``n`` joints; quaternions of random sign and norm."""
    q = rng.normal(size=batch + (7 + n,))
    q[..., 3:7] *= rng.uniform(0.5, 2.0, batch + (1,))
    return q, rng.normal(size=batch + (6 + n,)), rng.normal(size=batch + (6 + n,))


def velocity_map(q: np.ndarray, source: str, target: str) -> np.ndarray:
    """T (nv, nv) with v_target = T v_source, column by column."""
    return convert_floating(q, np.eye(q.shape[-1] - 1), source=source, target=target)[1].T


# ---- round trips, broadcasting ----

def test_round_trip_through_all_conventions():
    rng = np.random.default_rng(0)
    q, v, a = random_state(rng, (7, 5), 4)
    state = (q, v, a)
    for source, target in [("pinocchio", "mujoco"), ("mujoco", "drake"), ("drake", "composedyn")]:
        state = convert_floating(*state, source=source, target=target)
    assert np.array_equal(state[0], q)  # positions and quaternions are only moved
    assert rel_err(state[1], v) < 1e-14 and rel_err(state[2], a) < 1e-14


@pytest.mark.parametrize("source, target", list(itertools.product(CONVENTIONS, repeat=2)))
def test_pairwise_inverse(source, target):
    rng = np.random.default_rng(1)
    q, v, a = random_state(rng, (20,), 3)
    q1, v1, a1 = convert_floating(q, v, a, source=source, target=target)
    q2, v2, a2 = convert_floating(q1, v1, a1, source=target, target=source)
    assert np.array_equal(q2, q)
    assert rel_err(v2, v) < 1e-14 and rel_err(a2, a) < 1e-14
    assert np.array_equal(q1[..., 7:], q[..., 7:]) and np.array_equal(v1[..., 6:], v[..., 6:])


def test_quaternion_sign_and_norm_kept_unless_normalize():
    q = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 0.6, -0.8, 0.5]) * np.r_[1, 1, 1, 2, 2, 2, 2, 1]
    assert np.array_equal(convert_floating(q, target="mujoco")[0][3:7], [-1.6, 0.0, 0.0, 1.2])
    assert np.array_equal(convert_floating(q, target="drake")[0][:4], [-1.6, 0.0, 0.0, 1.2])
    unit = convert_floating(q, target="drake", normalize=True)[0]
    assert np.allclose(unit[:4], [-0.8, 0.0, 0.0, 0.6], rtol=0, atol=1e-16)


def test_broadcasting_over_batch_axes_equals_a_loop():
    rng = np.random.default_rng(2)
    q, _, _ = random_state(rng, (3, 1), 2)
    _, v, a = random_state(rng, (4,), 2)
    out_q, out_v, out_a = convert_floating(q, v, a, source="drake", target="mujoco")
    assert out_q.shape == (3, 1, 9) and out_v.shape == out_a.shape == (3, 4, 8)
    for i, j in np.ndindex(3, 4):
        one = convert_floating(q[i, 0], v[j], a[j], source="drake", target="mujoco")
        assert np.array_equal(one[0], out_q[i, 0])
        assert np.allclose(one[1], out_v[i, j], rtol=0, atol=1e-15)
        assert np.allclose(one[2], out_a[i, j], rtol=0, atol=1e-15)


def test_none_passes_through():
    q = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert convert_floating(q)[1:] == (None, None)
    assert convert_floating(q, np.ones(6))[2] is None


# ---- finite differences along a smooth base trajectory ----

def _pose(t: float):
    """Closed-form base trajectory: position (3,), unnormalised quaternion (x, y, z, w), joints (2,)."""
    p = np.array([np.sin(1.3 * t), 0.4 * t**2 - t, np.cos(0.7 * t) + 0.2 * t**3])
    quat = np.array([np.sin(0.9 * t) + 0.3, 0.5 * np.cos(1.7 * t), 0.2 + 0.6 * t, 1.0 + 0.3 * np.sin(2.1 * t)])
    return p, 1.7 * quat, np.array([np.sin(2.0 * t), t**2])


def _d(f, t: float, h: float) -> np.ndarray:
    """Fourth-order central difference of f at t."""
    return (f(t - 2 * h) - 8 * f(t - h) + 8 * f(t + h) - f(t + 2 * h)) / (12 * h)


def _rot(t: float) -> np.ndarray:
    return Rotation.from_quat(_pose(t)[1]).as_matrix()  # SciPy: (x, y, z, w), normalises


def _vee(S: np.ndarray) -> np.ndarray:
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def _q(t: float, convention: str) -> np.ndarray:
    p, quat, j = _pose(t)
    x, y, z, w = quat
    return {"pinocchio": np.r_[p, x, y, z, w, j], "mujoco": np.r_[p, w, x, y, z, j],
            "drake": np.r_[w, x, y, z, p, j]}[convention]


def _v(t: float, convention: str, h: float = 1e-4) -> np.ndarray:
    """Each convention's velocity from its definition, by finite differences of the pose."""
    R, dR = _rot(t), _d(_rot, t, h)
    dp, dj = _d(lambda s: _pose(s)[0], t, h), _d(lambda s: _pose(s)[2], t, h)
    w_base, w_world = _vee(R.T @ dR), _vee(dR @ R.T)
    return {"pinocchio": np.r_[R.T @ dp, w_base, dj], "mujoco": np.r_[dp, w_base, dj],
            "drake": np.r_[w_world, dp, dj]}[convention]


@pytest.mark.parametrize("source", CONVENTIONS)
def test_velocity_and_acceleration_match_finite_differences(source):
    for t in (-0.8, 0.1, 1.3):
        a_fd = {c: _d(lambda s, c=c: _v(s, c), t, 1e-3) for c in CONVENTIONS}
        for target in CONVENTIONS:
            q, v, a = convert_floating(_q(t, source), _v(t, source), a_fd[source], source=source, target=target)
            assert np.array_equal(q, _q(t, target))
            assert rel_err(v, _v(t, target)) < FD_TOL, (source, target, t)
            assert rel_err(a, a_fd[target]) < FD_TOL, (source, target, t)


# ---- generalised forces ----

@pytest.mark.parametrize("source, target", list(itertools.permutations(CONVENTIONS, 2)))
def test_forces_keep_the_power(source, target):
    rng = np.random.default_rng(3)
    q, v, tau = random_state(rng, (10,), 3)
    v_t = convert_floating(q, v, source=source, target=target)[1]
    tau_t = convert_floating_forces(q, tau, source=source, target=target)
    assert np.allclose(np.sum(tau_t * v_t, -1), np.sum(tau * v, -1), rtol=1e-14, atol=1e-14)
    for k in range(3):
        T = velocity_map(q[k], source, target)
        assert np.allclose(tau_t[k], np.linalg.solve(T.T, tau[k]), rtol=0, atol=1e-14)


# ---- MuJoCo on the same URDF ----

def _urdf(name: str) -> str:
    return str(erd_robots_dir() / VENDOR[name]) if name in VENDOR else random_urdf(*RANDOM[name])


class _Pair:
    """The same URDF in Pinocchio (free flyer) and MuJoCo (free root joint), joints matched by name."""

    def __init__(self, urdf: str):
        build = pin.buildModelFromXML if urdf.lstrip().startswith("<") else pin.buildModelFromUrdf
        self.pm = build(urdf, pin.JointModelFreeFlyer())
        self.pd = self.pm.createData()
        self.mm, self.md = load_floating(urdf)
        self.names = [self.pm.names[i] for i in range(2, self.pm.njoints)]
        mj_names = [self.mm.joint(i).name for i in range(1, self.mm.njnt)]
        assert sorted(self.names) == sorted(mj_names), (self.names, mj_names)
        ids = [self.mm.joint(nm).id for nm in self.names]
        self.qadr = np.r_[0:7, self.mm.jnt_qposadr[ids]]  # MuJoCo index of each Pinocchio-ordered entry
        self.vadr = np.r_[0:6, self.mm.jnt_dofadr[ids]]
        self.two = [self.pm.joints[i].nq == 2 for i in range(2, self.pm.njoints)]  # continuous: (cos, sin)

    def state(self, rng: np.random.Generator):
        """Unit-quaternion base, joint angles in Pinocchio order -> (q with angles, Pinocchio q, v, a)."""
        base = np.r_[rng.normal(size=3), Rotation.random(random_state=rng).as_quat() * rng.choice([-1, 1])]
        th = rng.uniform(-np.pi, np.pi, len(self.names))
        q_pin = np.r_[base, np.concatenate([[np.cos(x), np.sin(x)] if c else [x] for x, c in zip(th, self.two)])]
        return np.r_[base, th], q_pin, rng.normal(size=self.pm.nv), rng.normal(size=self.pm.nv)

    def mujoco(self, q, v=None, a=None):
        """Set MuJoCo's qpos, qvel (and qacc) from MuJoCo-convention vectors with joints in Pinocchio's order
        (MuJoCo's entries of them: ``qadr``, ``vadr``)."""
        self.md.qpos[self.qadr] = q
        self.md.qvel[:] = 0.0
        if v is not None:
            self.md.qvel[self.vadr] = v
        if a is not None:
            self.md.qacc[self.vadr] = a


@pytest.mark.parametrize("name", list(VENDOR) + list(RANDOM))
def test_mujoco_keeps_the_urdf_bodies_and_masses(name):
    urdf = _urdf(name)
    pair = _Pair(urdf)
    masses = urdf_link_masses(urdf)
    for link, mass in masses.items():
        assert pair.mm.body(link).mass[0] == pytest.approx(mass, rel=1e-15, abs=0), link
    assert pair.mm.nbody == len(masses) + 1  # world + one body per link: nothing fused
    assert pair.mm.body_subtreemass[0] == pytest.approx(sum(i.mass for i in pair.pm.inertias), rel=1e-14)
    assert np.array_equal(pair.mm.opt.gravity, pair.pm.gravity.linear)
    assert pair.mm.nv == pair.pm.nv and not pair.mm.dof_damping.any() and not pair.mm.dof_armature.any()
    assert not pair.pm.armature.any()


@pytest.mark.parametrize("name", list(VENDOR) + list(RANDOM))
def test_mujoco_dynamics_equal_pinocchio_after_conversion(name):
    """M_mj = T M T^T, h_mj = T h - M_mj c, tau_mj = T tau, with v_mj = T v and c = a_mj at a = 0."""
    pair = _Pair(_urdf(name))
    pm, pd = pair.pm, pair.pd
    rng = np.random.default_rng(4)
    for _ in range(4):
        q, q_pin, v, a = pair.state(rng)
        q_mj, v_mj, a_mj = convert_floating(q, v, a, source="pinocchio", target="mujoco")
        T = velocity_map(q, "pinocchio", "mujoco")
        M = np.triu(pin.crba(pm, pd, q_pin))
        M_mj = T @ (M + np.triu(M, 1).T) @ T.T
        c = convert_floating(q, v, np.zeros_like(a), source="pinocchio", target="mujoco")[2]
        h_mj = convert_floating_forces(q, pin.nonLinearEffects(pm, pd, q_pin, v), target="mujoco") - M_mj @ c
        tau_mj = convert_floating_forces(q, pin.rnea(pm, pd, q_pin, v, a), target="mujoco")

        pair.mujoco(q_mj, v_mj)
        M_oracle = mass_matrix(pair.mm, pair.md)  # mj_forward: also fills qfrc_bias
        assert rel_err(M_oracle[np.ix_(pair.vadr, pair.vadr)], M_mj) < ORACLE_TOL
        assert rel_err(pair.md.qfrc_bias[pair.vadr], h_mj) < ORACLE_TOL
        pair.mujoco(q_mj, v_mj, a_mj)
        mujoco.mj_inverse(pair.mm, pair.md)
        assert rel_err(pair.md.qfrc_inverse[pair.vadr], tau_mj) < ORACLE_TOL

        # the comparison can fail: Pinocchio's base velocity used as MuJoCo's as it is
        pair.mujoco(q_mj, v, a)
        mujoco.mj_inverse(pair.mm, pair.md)
        assert rel_err(pair.md.qfrc_inverse[pair.vadr], tau_mj) > 1e-3


def test_mujoco_state_converted_to_pinocchio():
    """The other direction: a random MuJoCo state (non-unit quaternion) -> Pinocchio's rnea = mj_inverse."""
    pair = _Pair(_urdf("solo12"))
    rng = np.random.default_rng(5)
    q, _, _, _ = pair.state(rng)
    q_mj = convert_floating(q, target="mujoco")[0]
    q_mj[3:7] *= 3.0  # MuJoCo normalises the quaternion, so does the conversion's rotation
    v_mj, a_mj = rng.normal(size=pair.pm.nv), rng.normal(size=pair.pm.nv)
    pair.mujoco(q_mj, v_mj, a_mj)
    mujoco.mj_inverse(pair.mm, pair.md)
    q_p, v_p, a_p = convert_floating(q_mj, v_mj, a_mj, source="mujoco", target="pinocchio", normalize=True)
    tau = convert_floating_forces(q_mj, pair.md.qfrc_inverse[pair.vadr], source="mujoco", target="pinocchio")
    assert rel_err(tau, pin.rnea(pair.pm, pair.pd, q_p, v_p, a_p)) < ORACLE_TOL


@pytest.mark.parametrize("name", list(VENDOR) + ["random_5_10"])
def test_composedyn_floating_robot_equals_mujoco_after_conversion(name):
    """cd.load(..., floating=True) (Pinocchio's coordinates), batched, converted: mj_inverse and mj_fullM."""
    urdf = _urdf(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(urdf, floating=True)
    mm, md = load_floating(urdf)
    ids = [mm.joint(nm).id for nm in robot.joint_names]
    qadr, vadr = np.r_[0:7, mm.jnt_qposadr[ids]], np.r_[0:6, mm.jnt_dofadr[ids]]
    rng = np.random.default_rng(6)
    q = robot.random_configuration(size=5, seed=6)
    v, a = rng.normal(size=(2, 5, robot.nv))
    q_mj, v_mj, a_mj = cd.convert_floating(q, v, a, source="composedyn", target="mujoco")
    tau_mj = cd.convert_floating_forces(q, robot.inverse_dynamics(q, v, a, friction=False), target="mujoco")
    T = np.stack([velocity_map(qk, "composedyn", "mujoco") for qk in q])
    M_mj = T @ robot.mass_matrix(q) @ np.swapaxes(T, -1, -2)
    for k in range(len(q)):
        md.qpos[qadr], md.qvel[vadr] = q_mj[k], v_mj[k]
        assert rel_err(mass_matrix(mm, md)[np.ix_(vadr, vadr)], M_mj[k]) < ORACLE_TOL
        md.qacc[vadr] = a_mj[k]
        mujoco.mj_inverse(mm, md)
        assert rel_err(md.qfrc_inverse[vadr], tau_mj[k]) < ORACLE_TOL


# ---- the documentation's example ----

def test_docs_example_runs():
    text = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "floating_base.md").read_text(encoding="utf-8")
    section = text[text.index("## Free-flyer conventions\n"):]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    (block,) = re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)
    namespace: dict = {}
    exec(compile(block, "docs/guide/floating_base.md, Free-flyer conventions", "exec"), namespace)
    assert np.allclose(namespace["v"][:6], [0.0, -0.5, 0.0, 0.0, 0.0, 0.2], rtol=0, atol=1e-15)
    assert np.allclose(namespace["tau_mujoco"][:3], [0.0, 10.0, 0.0], rtol=0, atol=1e-14)  # base x force -> world y


# ---- bad input ----

@pytest.mark.parametrize("kwargs, message", [
    ({"source": "mujuco"}, "unknown source free-flyer convention 'mujuco' (did you mean 'mujoco'?)"),
    ({"target": "urdf"}, "known: pinocchio, mujoco, drake, composedyn"),
])
def test_unknown_convention(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        convert_floating(np.r_[0.0, 0, 0, 0, 0, 0, 1], **kwargs)


@pytest.mark.parametrize("q, v, a, message", [
    (np.zeros(6), None, None, "q of length 6"),
    (np.r_[0.0, 0, 0, 0, 0, 0, 1, 0], np.zeros(8), None, "v has length 8 but q has length 8: .* nv = nq - 1 = 7"),
    (np.r_[0.0, 0, 0, 0, 0, 0, 1], np.zeros(6), np.zeros(5), "a has length 5 but q has length 7"),
    (np.r_[0.0, 0, 0, 0, 0, 0, 1], None, np.zeros(6), "needs the velocity v"),
    (np.zeros((2, 7)), None, None, r"base quaternion at batch index \(0,\) has zero norm"),
    (np.r_[0.0, 0, 0, np.nan, 0, 0, 1], None, None, "zero norm or is not finite"),
    (np.zeros((2, 7)) + np.r_[0.0, 0, 0, 0, 0, 0, 1], np.zeros((3, 6)), None, "batch shapes do not broadcast"),
])
def test_bad_input_one_clear_error(q, v, a, message):
    with pytest.raises(ValueError, match=message):
        convert_floating(q, v, a)

"""composedyn against Pinocchio, an independent implementation reading the same URDF.

Random trees (``random_robots.py``: revolute, continuous, prismatic, fixed
joints; random origins, axes, inertias; 1 to 30 joints, branched) and the
example-robot-data URDFs of UR5, Panda, double pendulum, Talos and ANYmal
(fixed base).  At random states tau, M, C, C qd, g, forward dynamics (facade,
ABA kernel, CRBA + Cholesky), kinetic and potential energy, and inverse and
forward dynamics with external wrenches agree to a relative error below 1e-9;
the facade (compiled or NumPy backend) and the NumPy kernels are both checked.
composedyn runs each quantity once on the whole batch of states; Pinocchio
once per state.  Joints are mapped by name; continuous joints are (cos, sin)
in Pinocchio.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings

import composedyn as cd
from composedyn.dynamics.reference.aba import aba
from composedyn.dynamics.reference.coriolis import coriolis_matrix
from composedyn.dynamics.reference.crba import crba
from composedyn.dynamics.reference.forward import solve_mass
from composedyn.dynamics.reference.rnea import rnea
from pin_oracle import ERD_URDFS, PinPair, erd_urdf, pin, rel_err
from random_robots import FIXED_SEEDS, random_urdf, urdfs

TOL = 1e-9


def load(urdf: str) -> cd.Robot:
    """A Robot with mimic joints (Panda fingers) as independent joints, warnings off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        try:
            return cd.from_urdf(urdf, mimic="independent")
        except TypeError:  # before the mimic option lands, mimic joints load as independent
            return cd.from_urdf(urdf)


def xml_root(urdf: str) -> ET.Element:
    return ET.fromstring(urdf) if urdf.lstrip().startswith("<") else ET.parse(urdf).getroot()


def pin_pair(robot: cd.Robot, urdf: str) -> PinPair:
    """Pinocchio model of ``urdf``; the non-standard ``<dynamics armature>`` set from the XML."""
    pp = PinPair(robot, urdf)
    arm = {j.get("name"): float(j.find("dynamics").get("armature", 0.0))
           for j in xml_root(urdf).iter("joint") if j.find("dynamics") is not None}
    pp.model.armature = np.array([arm.get(nm, 0.0) for nm in pp.names])
    pp.data = pp.model.createData()
    return pp


def link_coms(urdf: str) -> dict:
    """Centre of mass of every link in its link frame, read from the XML (0 without <inertial>)."""
    out = {}
    for link in xml_root(urdf).iter("link"):
        org = link.find("inertial/origin")
        out[link.get("name")] = (np.zeros(3) if org is None
                                 else np.array([float(x) for x in org.get("xyz", "0 0 0").split()]))
    return out


def pin_fext(pp: PinPair, qp: np.ndarray, coms: dict, f_ext: dict) -> list:
    """World wrenches at link centres of mass -> Pinocchio per-joint forces in joint frames."""
    m, d = pp.model, pp.data
    pin.forwardKinematics(m, d, qp)
    pin.updateFramePlacements(m, d)
    fext = [pin.Force.Zero() for _ in range(m.njoints)]
    for link, w in f_ext.items():
        fid = m.getFrameId(link, pin.BODY)
        jp = m.frames[fid].parentJoint
        c = d.oMf[fid].act(coms[link])
        R, o = d.oMi[jp].rotation, d.oMi[jp].translation
        moment = w[3:] + np.cross(c - o, w[:3])
        fext[jp] = fext[jp] + pin.Force(R.T @ w[:3], R.T @ moment)
    return fext


def check_against_pinocchio(robot: cd.Robot, pp: PinPair, rng: np.random.Generator, k: int = 3) -> None:
    n, mdl = robot.dof, robot.model
    Q, QD, X = rng.uniform(-1.5, 1.5, (3, k, n))
    ours = {
        "tau": robot.inverse_dynamics(Q, QD, X, friction=False),
        "M": robot.mass_matrix(Q),
        "C": robot.coriolis_matrix(Q, QD),
        "g": robot.gravity_torques(Q),
        "h": robot.bias_torques(Q, QD),
        "fd": robot.forward_dynamics(Q, QD, X, friction=False),
        "aba": aba(mdl, Q, QD, X),
        # the NumPy kernels as well, whichever backend the facade runs
        "rnea": rnea(mdl, Q, QD, X) + mdl.armature * X,
        "crba": crba(mdl, Q) + np.diag(mdl.armature),
        "coriolis": coriolis_matrix(mdl, Q, QD),
        "chol": solve_mass(mdl, crba(mdl, Q) + np.diag(mdl.armature), X - rnea(mdl, Q, QD, np.zeros_like(Q))),
        "T": robot.kinetic_energy(Q, QD),
        "V": robot.potential_energy(Q),
    }
    m, d = pp.model, pp.data
    for s in range(k):
        qp, vp, xp = pp.q(Q[s]), pp.v(QD[s]), pp.v(X[s])
        Mp = pin.crba(m, d, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        gp = pin.computeGeneralizedGravity(m, d, qp).copy()
        hp = pin.nonLinearEffects(m, d, qp, vp).copy()
        Cp = pin.computeCoriolisMatrix(m, d, qp, vp).copy()
        ap = pin.aba(m, d, qp, vp, xp).copy()
        # Pinocchio 4.1's computeKineticEnergy handles armature inconsistently (ignored on
        # revolute joints, added on a continuous one), so use 1/2 v^T M v then.
        Tp = 0.5 * vp @ Mp @ vp if m.armature.any() else pin.computeKineticEnergy(m, d, qp, vp)
        theirs = {
            "tau": pin.rnea(m, d, qp, vp, xp), "M": Mp, "C": Cp, "g": gp, "h": hp,
            "fd": ap, "aba": ap, "chol": ap, "T": Tp, "V": pin.computePotentialEnergy(m, d, qp),
            "rnea": pin.rnea(m, d, qp, vp, xp), "crba": Mp, "coriolis": Cp,
        }
        for key, ref in theirs.items():
            mine = ours[key][s]
            mine = pp.mat(mine) if np.ndim(mine) == 2 else pp.v(mine) if np.ndim(mine) == 1 else mine
            assert rel_err(mine, ref) < TOL, (key, s, rel_err(mine, ref))
        Cqd = np.einsum("ij,j->i", ours["C"][s], QD[s])
        assert rel_err(pp.v(Cqd), hp - gp) < TOL, ("C qd", s)


@pytest.mark.parametrize("seed,n", FIXED_SEEDS)
def test_random_trees_match_pinocchio(seed, n):
    xml = random_urdf(seed, n, armature=seed % 2 == 1)
    robot = load(xml)
    check_against_pinocchio(robot, pin_pair(robot, xml), np.random.default_rng(seed))


@given(urdfs(max_joints=30))
@settings(max_examples=40, deadline=None)
def test_hypothesis_trees_match_pinocchio(xml):
    robot = load(xml)
    check_against_pinocchio(robot, pin_pair(robot, xml), np.random.default_rng(0), k=2)


@pytest.mark.parametrize("key", sorted(ERD_URDFS))
def test_vendor_urdfs_match_pinocchio(key):
    path = erd_urdf(key)
    robot = load(path)
    check_against_pinocchio(robot, pin_pair(robot, path), np.random.default_rng(1))


def check_fext(robot: cd.Robot, pp: PinPair, urdf: str, rng: np.random.Generator, k: int = 3) -> None:
    """Inverse and forward dynamics with world wrenches at link COMs on a few links,
    welded and base links included, one wrench per state (batched)."""
    n, coms = robot.dof, link_coms(urdf)
    links = list(rng.choice(sorted(coms), size=min(4, len(coms)), replace=False))
    F = {lk: rng.normal(size=(k, 6)) for lk in links}
    Q, QD, X = rng.uniform(-1.5, 1.5, (3, k, n))
    tau = robot.inverse_dynamics(Q, QD, X, f_ext=F, friction=False)
    qdd = robot.forward_dynamics(Q, QD, X, f_ext=F, friction=False)
    for s in range(k):
        qp, vp, xp = pp.q(Q[s]), pp.v(QD[s]), pp.v(X[s])
        fext = pin_fext(pp, qp, coms, {lk: F[lk][s] for lk in links})
        assert rel_err(pp.v(tau[s]), pin.rnea(pp.model, pp.data, qp, vp, xp, fext)) < TOL, (links, s)
        assert rel_err(pp.v(qdd[s]), pin.aba(pp.model, pp.data, qp, vp, xp, fext)) < TOL, (links, s)


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[2:])
def test_external_wrenches_match_pinocchio(seed, n):
    xml = random_urdf(seed, n, p_fixed=0.5)
    robot = load(xml)
    check_fext(robot, pin_pair(robot, xml), xml, np.random.default_rng(seed))


@pytest.mark.parametrize("key", ["ur5", "panda"])
def test_vendor_external_wrenches_match_pinocchio(key):
    path = erd_urdf(key)
    robot = load(path)
    check_fext(robot, pin_pair(robot, path), path, np.random.default_rng(2))

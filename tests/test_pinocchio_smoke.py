"""Smoke test of the recursive algorithms against Pinocchio on vendor URDFs."""

import warnings

import numpy as np
import pytest

import composedyn as cd
from pin_oracle import ERD_URDFS, PinPair, erd_urdf, pin, rel_err


@pytest.mark.parametrize("key", sorted(ERD_URDFS))
def test_rnea_crba_coriolis_gravity_match_pinocchio(key):
    path = erd_urdf(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cd.ModelWarning)
        robot = cd.from_urdf(path, mimic="independent")  # mimic models: tests/test_mimic.py
    pp = PinPair(robot, path)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
        qp, vp, ap = pp.q(q), pp.v(qd), pp.v(qdd)
        assert rel_err(pp.v(robot.inverse_dynamics(q, qd, qdd, friction=False)),
                       pin.rnea(pp.model, pp.data, qp, vp, ap)) < 1e-9
        Mp = pin.crba(pp.model, pp.data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        assert rel_err(pp.mat(robot.mass_matrix(q)), Mp) < 1e-9
        Cp = pin.computeCoriolisMatrix(pp.model, pp.data, qp, vp)
        assert rel_err(pp.mat(robot.coriolis_matrix(q, qd)), Cp) < 1e-9
        gp = pin.computeGeneralizedGravity(pp.model, pp.data, qp)
        assert rel_err(pp.v(robot.gravity_torques(q)), gp) < 1e-9

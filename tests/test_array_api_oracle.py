"""The array-API engine itself against Pinocchio: the
centroidal momentum matrix of fixed-base robots (``pinocchio.computeCentroidalMap``) and the
joint-space inertia's inverse used by forward dynamics (``pinocchio.computeMinverse``)."""

from __future__ import annotations

import numpy as np
import pytest

import composedyn as cd
from composedyn.dynamics import array_api as aa
from composedyn.testing.random_robots import random_urdf
from pin_oracle import PinPair, erd_urdf, pin
from test_array_api_core import close


def _cases():
    yield "ur5", erd_urdf("ur5")
    yield "random", random_urdf(21, 10, types=("revolute", "prismatic"))


@pytest.mark.parametrize("name,urdf", list(_cases()), ids=[c[0] for c in _cases()])
def test_fixed_base_centroidal_momentum_matrix_equals_pinocchio(name, urdf):
    import array_api_compat.numpy as xp

    robot = cd.from_urdf(urdf)
    pp = PinPair(robot, urdf)
    bm = aa.on(aa.from_robot(robot), xp)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = rng.uniform(-2, 2, robot.nq), rng.normal(size=robot.nv)
        A = aa.centroidal_momentum_matrix(bm, q)
        Ag = pin.computeCentroidalMap(pp.model, pp.data, pp.q(q))
        close(A[:, pp.perm], Ag, 1e-12)
        close(A @ v, Ag @ pp.v(v), 1e-12)
        # forward dynamics with unit torques in turn: the columns of M^-1
        Minv = pin.computeMinverse(pp.model, pp.data, pp.q(q))
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        tau = np.eye(robot.nv)
        zero = np.zeros(robot.nv)
        bias = aa.forward_dynamics(bm, q, zero, zero, friction=False)
        cols = aa.forward_dynamics(bm, q, zero, tau, friction=False) - bias
        close(pp.mat(cols.T), Minv, 1e-10)

"""The compiled joint model (dynamics/compiled/joint.py) against the NumPy kinematics."""

import numpy as np
import pytest
from numba import njit

import composedyn as cd
from composedyn.dynamics.compiled.joint import (
    joint_angle,
    joint_bias,
    joint_force,
    joint_motion,
    joint_motion_world,
    joint_pose,
    joint_rotate,
    joint_rotate_t,
    rot,
)
from composedyn.dynamics.compiled.layout import pack
from composedyn.dynamics.compiled.sincos import REDUCED, sincos
from composedyn.dynamics.reference.kinematics import body_poses, motion_subspaces
from random_robots import FIXED_SEEDS, random_urdf


@njit(cache=True)
def _chain(im, fm, q, Rw, pw):
    """World poses by composing joint_pose down the tree."""
    for i in range(q.shape[0]):
        R, p = joint_pose(im, fm, i, q[i])
        k = im[i, 0]
        if k < 0:
            for r in range(9):
                Rw[i, r] = R[r]
            for r in range(3):
                pw[i, r] = p[r]
        else:
            K = (Rw[k, 0], Rw[k, 1], Rw[k, 2], Rw[k, 3], Rw[k, 4], Rw[k, 5], Rw[k, 6], Rw[k, 7], Rw[k, 8])
            for c in range(3):
                x0, x1, x2 = rot(K, R[c], R[3 + c], R[6 + c])
                Rw[i, c], Rw[i, 3 + c], Rw[i, 6 + c] = x0, x1, x2
            y0, y1, y2 = rot(K, p[0], p[1], p[2])
            pw[i, 0], pw[i, 1], pw[i, 2] = pw[k, 0] + y0, pw[k, 1] + y1, pw[k, 2] + y2


@njit(cache=True)
def _subspace(im, fm, i, x, f):
    return joint_motion(im, fm, i, x), joint_force(im, fm, i, f[0], f[1], f[2], f[3], f[4], f[5])


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[:6])
def test_joint_pose_motion_force_match_numpy(seed, n):
    robot = cd.from_urdf(random_urdf(seed, n))
    m = robot.model
    im, fm = pack(m)
    q = np.random.default_rng(seed).uniform(-2, 2, m.n)
    Rw, pw = np.empty((m.n, 9)), np.empty((m.n, 3))
    _chain(im, fm, q, Rw, pw)
    R, p = body_poses(m, q)
    assert np.allclose(Rw.reshape(-1, 3, 3), R, atol=1e-12) and np.allclose(pw, p, atol=1e-12)
    S = motion_subspaces(m, R, p)  # world frame, angular first
    f = np.random.default_rng(seed + 1).normal(size=6)
    for i in range(m.n):
        s_body, tau = _subspace(im, fm, i, 1.0, f)
        # body-frame S rotated to world axes, moved to the world origin: (R w, R u + p x R w)
        w, u = R[i] @ np.array(s_body[:3]), R[i] @ np.array(s_body[3:])
        assert np.allclose(np.r_[w, u + np.cross(p[i], w)], S[i], atol=1e-12)
        assert tau == pytest.approx(float(np.dot(s_body[:3], f[:3]) + np.dot(s_body[3:], f[3:])), abs=1e-12)


@njit(cache=True)
def _derived(im, fm, i, R, p, v, x, y):
    """joint_rotate(_t) of y, joint_motion_world at the world pose (R, p), joint_bias of v with rate x."""
    s, c = joint_angle(im, i, x)
    return (joint_rotate(im, fm, i, s, c, y[0], y[1], y[2]), joint_rotate_t(im, fm, i, s, c, y[0], y[1], y[2]),
            joint_motion_world(im, fm, i, (R[0], R[1], R[2], R[3], R[4], R[5], R[6], R[7], R[8]), p[0], p[1], p[2]),
            joint_bias(im, fm, i, v[0], v[1], v[2], v[3], v[4], v[5], x))


@pytest.mark.parametrize("seed,n", FIXED_SEEDS[:6])
def test_derived_helpers_match_pose_and_numpy(seed, n):
    """R v and R^T v without R, S in world axes, and v x S x equal their definitions."""
    m = cd.from_urdf(random_urdf(seed, n)).model
    im, fm = pack(m)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-2, 2, m.n)
    Rw, pw = body_poses(m, q)
    S = motion_subspaces(m, Rw, pw)  # world axes about the world origin, angular first
    for i in range(m.n):
        v, y, x = rng.normal(size=6), rng.normal(size=3), q[i]
        Rj = np.array(_pose(im, fm, i, x)[0]).reshape(3, 3)
        ry, rty, s_world, bias = _derived(im, fm, i, Rw[i].ravel(), pw[i], v, x, y)
        assert np.allclose(ry, Rj @ y, atol=1e-12) and np.allclose(rty, Rj.T @ y, atol=1e-12)
        assert np.allclose(s_world, S[i], atol=1e-12)
        s = np.array(_subspace(im, fm, i, x, np.zeros(6))[0])  # S x, body frame
        w, u = v[:3], v[3:]
        assert np.allclose(bias, np.r_[np.cross(w, s[:3]), np.cross(w, s[3:]) + np.cross(u, s[:3])], atol=1e-12)


@njit(cache=True)
def _pose(im, fm, i, x):
    return joint_pose(im, fm, i, x)


@njit(cache=True)
def _sincos_all(x, out):
    for i in range(x.shape[0]):
        out[i, 0], out[i, 1] = sincos(x[i])


def test_sincos_within_one_ulp_of_the_c_library():
    """The joint model's sine and cosine (one reduction, fdlibm polynomials, selects) are
    within 1 ulp of the C library's on every range a joint angle takes (plus the reduction's
    ~3.5e-27 per multiple of pi/2, visible only next to the zeros), mostly bit-identical, and
    the C library's own values beyond the reduction range."""
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1e-300, -1e-300, np.pi / 4, np.pi / 2, -np.pi / 2, np.pi, 2 * np.pi, 1e3 * np.pi,
               REDUCED * 0.999999, REDUCED, -REDUCED, 1e300, np.inf, -np.inf, np.nan]
    x = np.concatenate([rng.uniform(-s, s, 100_000) for s in (1.0, 4.0, 30.0, 1e4)] + [special])
    out = np.empty((x.size, 2))
    _sincos_all(x, out)
    k = np.abs(np.round(np.where(np.isfinite(x), x, 0.0) * 2 / np.pi))
    for got, want in ((out[:, 0], np.sin(x)), (out[:, 1], np.cos(x))):
        finite = np.isfinite(want)
        err = np.abs(got[finite] - want[finite])
        assert np.all(err <= np.spacing(np.abs(want[finite])) + 4e-27 * k[finite])  # reduction's pi/2 error
        assert (err == 0).mean() > 0.8 and np.median(err / np.spacing(np.abs(want[finite]))) == 0
        assert np.isnan(got[~finite]).all()
    big = np.abs(x) >= REDUCED
    assert np.array_equal(out[big, 0], np.sin(x[big]), equal_nan=True)

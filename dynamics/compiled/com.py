"""Compiled centre of mass and its Jacobian on the shared joint model.

Same quantities as :func:`composedyn.dynamics.reference.frames.center_of_mass` and
``com_jacobian`` (moving bodies only, world coordinates): a forward pass of
world poses (:func:`.joint.joint_pose`), then for the Jacobian a backward pass
of subtree mass m_j and world first moment h_j, column j =
(m_j v_j + w_j x h_j) / m with (w_j, v_j) joint j's motion subspace about the world
origin (:func:`.joint.joint_motion_world`; a_j x (h_j - m_j p_j) / m revolute, m_j a_j / m
prismatic), m the moving mass.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.jit import njit, prange
from composedyn.dynamics.compiled.joint import cross, joint_motion_world, joint_pose, rot
from composedyn.dynamics.compiled.layout import BLOCKS, MASS, H
from composedyn.dynamics.compiled.loops import serial_and_parallel

SCRATCH = 16  # per body: R 0:9, p 9:12, subtree mass 12, subtree world first moment 13:16


@njit(cache=True)
def _forward(im, fm, q, W):
    """World pose of every body and its own (mass, world first moment m c) into W."""
    for i in range(q.shape[0]):
        R, p = joint_pose(im, fm, i, q[i])
        k = im[i, 0]
        if k >= 0:
            Rk = (W[k, 0], W[k, 1], W[k, 2], W[k, 3], W[k, 4], W[k, 5], W[k, 6], W[k, 7], W[k, 8])
            c0, c1, c2 = rot(Rk, R[0], R[3], R[6])
            d0, d1, d2 = rot(Rk, R[1], R[4], R[7])
            e0, e1, e2 = rot(Rk, R[2], R[5], R[8])
            R = (c0, d0, e0, c1, d1, e1, c2, d2, e2)
            t0, t1, t2 = rot(Rk, p[0], p[1], p[2])
            p = (W[k, 9] + t0, W[k, 10] + t1, W[k, 11] + t2)
        for c in range(9):
            W[i, c] = R[c]
        W[i, 9], W[i, 10], W[i, 11] = p
        m = fm[i, MASS]
        h0, h1, h2 = rot(R, fm[i, H], fm[i, H + 1], fm[i, H + 2])  # R (m c)
        W[i, 12], W[i, 13], W[i, 14], W[i, 15] = m, h0 + m * p[0], h1 + m * p[1], h2 + m * p[2]


@njit(cache=True)
def com_into(im, fm, q, mass, out, W):
    """Centre of mass (3,) into ``out``; ``mass`` is the moving mass."""
    _forward(im, fm, q, W)
    s0 = s1 = s2 = 0.0
    for i in range(q.shape[0]):
        s0, s1, s2 = s0 + W[i, 13], s1 + W[i, 14], s2 + W[i, 15]
    out[0], out[1], out[2] = s0 / mass, s1 / mass, s2 / mass


@njit(cache=True)
def com_jacobian_into(im, fm, q, mass, out, W):
    """COM Jacobian (3, n) into ``out``."""
    _forward(im, fm, q, W)
    for i in range(q.shape[0] - 1, -1, -1):
        k = im[i, 0]
        R = (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5], W[i, 6], W[i, 7], W[i, 8])
        m = W[i, 12]
        s0, s1, s2, s3, s4, s5 = joint_motion_world(im, fm, i, R, W[i, 9], W[i, 10], W[i, 11])
        c0, c1, c2 = cross(s0, s1, s2, W[i, 13], W[i, 14], W[i, 15])  # m v + w x h, (w, v) = S about O
        c0, c1, c2 = c0 + m * s3, c1 + m * s4, c2 + m * s5
        out[0, i], out[1, i], out[2, i] = c0 / mass, c1 / mass, c2 / mass
        if k >= 0:
            for c in range(12, 16):
                W[k, c] += W[i, c]


@njit(cache=True)
def com_one(im, fm, q, mass, out):
    com_into(im, fm, q, mass, out, np.empty((q.shape[0], SCRATCH)))


@njit(cache=True)
def com_jacobian_one(im, fm, q, mass, out):
    com_jacobian_into(im, fm, q, mass, out, np.empty((q.shape[0], SCRATCH)))


def _com_loop(im, fm, Q, mass, OUT):
    """Samples Q (N, n) -> OUT (N, 3)."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        W = np.empty((n, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            com_into(im, fm, Q[s], mass, OUT[s], W)


def _com_jacobian_loop(im, fm, Q, mass, OUT):
    """Samples Q (N, n) -> OUT (N, 3, n)."""
    N, n = Q.shape[0], Q.shape[1]
    blocks = min(N, BLOCKS)
    for b in prange(blocks):
        W = np.empty((n, SCRATCH))
        for s in range(b * N // blocks, (b + 1) * N // blocks):
            com_jacobian_into(im, fm, Q[s], mass, OUT[s], W)


com_serial, com_parallel = serial_and_parallel(_com_loop)
com_jacobian_serial, com_jacobian_parallel = serial_and_parallel(_com_jacobian_loop)

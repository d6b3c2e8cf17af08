"""Compiled centre of mass and its Jacobian on the shared joint model.

Same quantities as :func:`composedyn.dynamics.reference.frames.center_of_mass` and
``com_jacobian`` (moving bodies only, world coordinates), on trees of joints of
every kind (:mod:`.joint`): a forward pass of world poses (the joint model's
rotation rows, :func:`.joint.joint_turn` and :func:`.joint.joint_offset`), then
for the Jacobian a backward pass of subtree mass m_j and world first moment h_j;
the column of each velocity coordinate of joint j is (m_j v + w x h_j) / m with
(w, v) its column of the motion subspace about the world origin
(:func:`.joint.joint_world_column`; a_j x (h_j - m_j p_j) / m revolute, m_j a_j / m
prismatic), m the moving mass.  A free flyer at the root followed by revolute and
prismatic joints (every floating robot, :func:`.joint.free_root`) takes body 0 through
the straight-line ``free_root_*`` functions and the other bodies through the
one-coordinate code at their offsets in q and v (:func:`com_root`, :func:`com_jacobian_root`).
"""

from __future__ import annotations

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    free_root,
    free_root_placement,
    free_root_world_column,
    joint_motion_world,
    joint_offset,
    joint_pose,
    joint_rotation_row,
    joint_sincos,
    joint_turn,
    joint_world_column,
    rot,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import IQ, IV, MASS, NV, PARENT, H
from composedyn.dynamics.reference import frames

SCRATCH = 16  # per body: R 0:9, p 9:12, subtree mass 12, subtree world first moment 13:16


@njit(cache=True, inline="always")
def _store(im, fm, i, R, p, W):
    """W[i] = body i's world pose from its pose (R, p) in its parent's and the parent's row, then its own
    (mass, world first moment m c)."""
    k = im[i, PARENT]
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


@njit(cache=True, inline="always")
def _mean(n, mass, out, W):
    """out = the sum of the n bodies' world first moments W[:, 13:16] over ``mass``; returns 0."""
    s0 = s1 = s2 = 0.0
    for i in range(n):
        s0, s1, s2 = s0 + W[i, 13], s1 + W[i, 14], s2 + W[i, 15]
    out[0], out[1], out[2] = s0 / mass, s1 / mass, s2 / mass
    return 0


@njit(cache=True, inline="always")
def _column(W, i, m, mass, d, s0, s1, s2, s3, s4, s5, out):
    """Column d of the COM Jacobian from the motion (w, v) = S about O moving body i's subtree (its mass
    m and world first moment W[i, 13:16]): (m v + w x h) / mass."""
    c0, c1, c2 = cross(s0, s1, s2, W[i, 13], W[i, 14], W[i, 15])
    c0, c1, c2 = c0 + m * s3, c1 + m * s4, c2 + m * s5
    out[0, d], out[1, d], out[2, d] = c0 / mass, c1 / mass, c2 / mass


@njit(cache=True)
def forward_general(im, fm, q, W):
    """:func:`_forward` for joints of every kind."""
    for i in range(im.shape[0]):
        s, c = joint_sincos(im, i, q)
        R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
        R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
        R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
        R = joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8))
        p = joint_offset(im, fm, i, q)
        _store(im, fm, i, R, p, W)


@njit(cache=True)
def com_general(im, fm, q, mass, out, W):
    """:func:`com_into` for joints of every kind."""
    forward_general(im, fm, q, W)
    return _mean(im.shape[0], mass, out, W)


@njit(cache=True)
def com_jacobian_general(im, fm, q, mass, out, W):
    """:func:`com_jacobian_into` for joints of every kind: one column per velocity coordinate."""
    forward_general(im, fm, q, W)
    for i in range(im.shape[0] - 1, -1, -1):
        k = im[i, PARENT]
        R = (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5], W[i, 6], W[i, 7], W[i, 8])
        m = W[i, 12]
        iv = im[i, IV]
        for e in range(im[i, NV]):
            s0, s1, s2, s3, s4, s5 = joint_world_column(im, fm, i, q, e, R, W[i, 9], W[i, 10], W[i, 11])
            _column(W, i, m, mass, iv + e, s0, s1, s2, s3, s4, s5, out)
        if k >= 0:
            for c in range(12, 16):
                W[k, c] += W[i, c]
    return 0


@njit(cache=True, inline="always")
def _forward_root(im, fm, q, W):
    """:func:`_forward` on a tree whose body 0 is a free flyer and whose other joints are revolute or
    prismatic (:func:`.joint.free_root`): body i > 0 at its coordinate q[im[i, IQ]]."""
    R, p = free_root_placement(fm, q)
    _store(im, fm, 0, R, p, W)
    for i in range(1, im.shape[0]):
        R, p = joint_pose(im, fm, i, q[im[i, IQ]])
        _store(im, fm, i, R, p, W)


@njit(cache=True)
def com_root(im, fm, q, mass, out, W):
    """:func:`com_into` for a free flyer at the root followed by revolute and prismatic joints."""
    _forward_root(im, fm, q, W)
    return _mean(im.shape[0], mass, out, W)


@njit(cache=True)
def com_jacobian_root(im, fm, q, mass, out, W):
    """:func:`com_jacobian_into` for a free flyer at the root followed by revolute and prismatic joints:
    body i > 0's column im[i, IV], then the root's six columns (its subtree: every body it carries)."""
    _forward_root(im, fm, q, W)
    for i in range(im.shape[0] - 1, 0, -1):
        k = im[i, PARENT]
        R = (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5], W[i, 6], W[i, 7], W[i, 8])
        m = W[i, 12]
        s0, s1, s2, s3, s4, s5 = joint_motion_world(im, fm, i, R, W[i, 9], W[i, 10], W[i, 11])
        _column(W, i, m, mass, im[i, IV], s0, s1, s2, s3, s4, s5, out)
        if k >= 0:
            for c in range(12, 16):
                W[k, c] += W[i, c]
    R = (W[0, 0], W[0, 1], W[0, 2], W[0, 3], W[0, 4], W[0, 5], W[0, 6], W[0, 7], W[0, 8])
    m = W[0, 12]
    for e in range(6):
        s0, s1, s2, s3, s4, s5 = free_root_world_column(e, R, W[0, 9], W[0, 10], W[0, 11])
        _column(W, 0, m, mass, e, s0, s1, s2, s3, s4, s5, out)
    return 0


@njit(cache=True)
def _forward(im, fm, q, W):
    """World pose of every body and its own (mass, world first moment m c) into W."""
    for i in range(q.shape[0]):
        R, p = joint_pose(im, fm, i, q[i])
        _store(im, fm, i, R, p, W)


@njit(cache=True, inline="always")
def com_into(im, fm, q, mass, out, W):
    """Centre of mass (3,) into ``out`` for q (nq,); ``mass`` is the moving mass; returns 0.  A model
    with a joint other than revolute or prismatic goes to :func:`com_root` (a free flyer at the root,
    then such joints) or :func:`com_general`."""
    if not scalar_joints(im):
        if free_root(im):
            return com_root(im, fm, q, mass, out, W)
        return com_general(im, fm, q, mass, out, W)
    _forward(im, fm, q, W)
    return _mean(q.shape[0], mass, out, W)


@njit(cache=True, inline="always")
def com_jacobian_into(im, fm, q, mass, out, W):
    """COM Jacobian (3, nv) into ``out`` for q (nq,); returns 0.  A model with a joint other than
    revolute or prismatic goes to :func:`com_jacobian_root` (a free flyer at the root, then such
    joints) or :func:`com_jacobian_general`."""
    if not scalar_joints(im):
        if free_root(im):
            return com_jacobian_root(im, fm, q, mass, out, W)
        return com_jacobian_general(im, fm, q, mass, out, W)
    _forward(im, fm, q, W)
    for i in range(q.shape[0] - 1, -1, -1):
        k = im[i, 0]
        R = (W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5], W[i, 6], W[i, 7], W[i, 8])
        m = W[i, 12]
        s0, s1, s2, s3, s4, s5 = joint_motion_world(im, fm, i, R, W[i, 9], W[i, 10], W[i, 11])
        _column(W, i, m, mass, i, s0, s1, s2, s3, s4, s5, out)
        if k >= 0:
            for c in range(12, 16):
                W[k, c] += W[i, c]
    return 0


# ---- declarations (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def _moving_mass(fm):
    m = 0.0
    for i in range(fm.shape[0]):
        m += fm[i, MASS]
    return m


@njit(cache=True, inline="always")
def center_of_mass(im, fm, q, out, W):
    """Centre of mass (3,) into out; status 5 when the moving bodies have no mass (undefined), 4: a zero
    quaternion."""
    mass = _moving_mass(fm)
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    return com_into(im, fm, q, mass, out, W) if mass > 0.0 else 5


@njit(cache=True, inline="always")
def com_jacobian(im, fm, q, out, W):
    """COM Jacobian (3, nv) into out; status as :func:`center_of_mass`."""
    mass = _moving_mass(fm)
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    return com_jacobian_into(im, fm, q, mass, out, W) if mass > 0.0 else 5


CENTER_OF_MASS = Quantity("center_of_mass", center_of_mass, inputs=(("q", "nq"),), results=((3,),),
                          scratch=(("nv", SCRATCH),), reference=frames.center_of_mass)
COM_JACOBIAN = Quantity("com_jacobian", com_jacobian, inputs=(("q", "nq"),), results=((3, "nv"),),
                        scratch=(("nv", SCRATCH),), reference=frames.com_jacobian)

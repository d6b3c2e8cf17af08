"""Task-space kinematics on the array API: frame poses, Jacobians, velocities, classical
accelerations, centre of mass and its Jacobian, centroidal momentum matrix, energy.

Conventions are the Robot's (:mod:`composedyn.dynamics.reference.frames`): a frame rides on
a body at a constant pose; ``reference="world"`` gives the frame origin's velocity and the
angular velocity in world axes (Pinocchio's LOCAL_WORLD_ALIGNED), ``"local"`` the same in the
frame's axes (LOCAL); rows linear first (m/s, rad/s); accelerations are classical (J qdd +
Jdot qd, Featherstone RBDA sec. 2.12).  With dependent mimic joints the columns are J Gv.
"""

from __future__ import annotations

from composedyn.dynamics.array_api.crba import composite_inertias, subtree_forces
from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    full_q,
    full_v,
    reduce_columns,
    tree,
    velocities,
    world_poses,
)
from composedyn.dynamics.array_api.rnea import accelerations, body_inertias
from composedyn.dynamics.array_api.spatial import cross, inertia_times, mtv, mv

_REFERENCES = ("world", "local")


def _reference(reference) -> bool:
    if reference not in _REFERENCES:
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return reference == "local"


def _frame_world(bm, W, k, batch):
    """World rotation (..., 3, 3) and origin (..., 3) of frame k from the body world poses W."""
    xp = bm.xp
    b, Rf, pf = bm.am.frame_body[k], bm.frame_R[k], bm.frame_p[k]
    if b < 0:
        return xp.broadcast_to(Rf, batch + (3, 3)), xp.broadcast_to(pf, batch + (3,))
    Rb, pb = W[b]
    return Rb @ Rf, pb + mv(Rb, pf)


def frame_pose(bm, q, frame: str):
    """World <- ``frame`` homogeneous transform (..., 4, 4) at q (..., nq) (rotation, origin in m)."""
    xp = bm.xp
    k = bm.am.frame_index(frame)
    batch = batch_shape(q)
    X, _ = tree(bm, full_q(bm, q))
    R, o = _frame_world(bm, world_poses(bm, X), k, batch)
    top = xp.concat([R, o[..., None]], axis=-1)
    last = xp.broadcast_to(xp.asarray([0.0, 0.0, 0.0, 1.0], dtype=bm.dtype, device=bm.device), batch + (1, 4))
    return xp.concat([top, last], axis=-2)


def _assemble_columns(bm, blocks, batch, rows):
    """(..., rows, nv_full) from per-body column blocks {body: (..., rows, nv_i)} (zeros elsewhere)."""
    xp = bm.xp
    am = bm.am
    cols = []
    for i in sorted(range(am.n), key=lambda i: am.joints[i].idx_v):
        shape = batch + (rows, am.joints[i].nv)
        cols.append(xp.broadcast_to(blocks[i], shape) if i in blocks
                    else xp.zeros(shape, dtype=bm.dtype, device=bm.device))
    return xp.concat(cols, axis=-1)


def _rotate_halves(xp, R, x):
    """R^T applied to the linear and angular halves of x (..., 6, k)."""
    Rt = xp.matrix_transpose(R)
    return xp.concat([Rt @ x[..., :3, :], Rt @ x[..., 3:, :]], axis=-2)


def jacobian(bm, q, frame: str, reference: str = "world"):
    """Frame Jacobian (..., 6, nv), linear rows first: column of joint j on the frame's chain
    = (R_j S_v + (R_j S_w) x (o - p_j), R_j S_w) in world axes (``"local"``: frame axes)."""
    xp = bm.xp
    local = _reference(reference)
    k = bm.am.frame_index(frame)
    batch = batch_shape(q)
    X, S = tree(bm, full_q(bm, q))
    W = world_poses(bm, X)
    Rf, o = _frame_world(bm, W, k, batch)
    b = bm.am.frame_body[k]
    blocks = {}
    for j in bm.am.ancestors(b) if b >= 0 else []:
        Rj, pj = W[j]
        Ww = Rj @ S[j][..., 3:, :]
        r = xp.broadcast_to((o - pj)[..., :, None], batch + (3, Ww.shape[-1]))
        lin = Rj @ S[j][..., :3, :] + xp.linalg.cross(Ww, r, axis=-2)
        blocks[j] = xp.concat([lin, Ww], axis=-2)
    J = _assemble_columns(bm, blocks, batch, 6)
    return reduce_columns(bm, _rotate_halves(xp, Rf, J) if local else J)


def frame_velocity(bm, q, qd, frame: str, reference: str = "world"):
    """Frame twist (..., 6) = J(q) qd: origin velocity (m/s) then angular velocity (rad/s)."""
    return mv(jacobian(bm, q, frame, reference), qd)


def frame_acceleration(bm, q, qd, qdd, frame: str, reference: str = "world"):
    """Classical acceleration (..., 6) of the frame origin (m/s^2) and angular acceleration
    (rad/s^2): J qdd + Jdot qd, from the body's spatial velocity (v, w) and acceleration
    (dv, dw) at the frame point r: a = dv + dw x r + w x (v + w x r)."""
    xp = bm.xp
    local = _reference(reference)
    k = bm.am.frame_index(frame)
    batch = batch_shape(q, qd, qdd)
    qf, vf, af = full_q(bm, q), full_v(bm, qd), full_v(bm, qdd)
    b = bm.am.frame_body[k]
    if b < 0:
        return xp.zeros(batch + (6,), dtype=bm.dtype, device=bm.device)
    X, S = tree(bm, qf)
    vel, vJ = velocities(bm, X, S, vf)
    acc = accelerations(bm, X, S, vel, vJ, qf, vf, af, gravity=False)
    (v, w), (dv, dw) = vel[b], acc[b]
    r = bm.frame_p[k]
    lin = dv + cross(xp, dw, r) + cross(xp, w, v + cross(xp, w, r))  # body b axes
    if local:
        Rf = bm.frame_R[k]
        out = (mtv(Rf, lin), mtv(Rf, dw))
    else:
        Rb = world_poses(bm, X)[b][0]
        out = (mv(Rb, lin), mv(Rb, dw))
    return xp.concat([xp.broadcast_to(x, batch + (3,)) for x in out], axis=-1)


def total_mass(bm) -> float:
    """Mass of the moving bodies (kg); ValueError when it is zero (no centre of mass)."""
    m = float(bm.am.inertia[:, 0].sum())
    if not m > 0.0:
        raise ValueError(f"{bm.am.name}: the moving bodies have no mass; the centre of mass is undefined")
    return m


def _first_moments(bm, W):
    """Per body its first moment m c (..., 3) in world coordinates (kg m)."""
    return [bm.m[i][..., None] * p + mv(R, bm.h[i]) for i, (R, p) in enumerate(W)]


def center_of_mass(bm, q):
    """Centre of mass (..., 3) of the moving bodies in world coordinates (m) (a floating base included)."""
    W = world_poses(bm, tree(bm, full_q(bm, q))[0])
    out = _first_moments(bm, W)
    total = out[0]
    for x in out[1:]:
        total = total + x
    return total / total_mass(bm)


def _momentum_columns(bm, q):
    """Per body j: world pose, and the subtree momentum per unit joint rate (Fl, Fn) in world
    axes, moment about the world origin: the columns of sum_i I_i J_i."""
    xp = bm.xp
    X, S = tree(bm, q)
    W = world_poses(bm, X)
    comp = composite_inertias(bm, X, body_inertias(bm))
    out = {}
    for j in range(bm.am.n):
        Fl, Fn = subtree_forces(bm, S, comp, j)
        R, p = W[j]
        Fl = R @ Fl
        Fn = R @ Fn + xp.linalg.cross(xp.broadcast_to(p[..., :, None], Fl.shape), Fl, axis=-2)
        out[j] = (Fl, Fn)
    return out


def com_jacobian(bm, q):
    """d com / d v (..., 3, nv), world axes: column j = R_j (IC_j S_j)_linear / total mass."""
    batch = batch_shape(q)
    cols = _momentum_columns(bm, full_q(bm, q))
    J = _assemble_columns(bm, {j: F[0] for j, F in cols.items()}, batch, 3)
    return reduce_columns(bm, J / total_mass(bm))


def centroidal_momentum_matrix(bm, q):
    """A_G (..., 6, nv): centroidal momentum h_G = A_G v, linear (kg m/s) then angular about the
    centre of mass (kg m^2/s), world axes (Orin, Goswami and Lee 2013, eq. 13; Pinocchio's ccrba)."""
    xp = bm.xp
    batch = batch_shape(q)
    qf = full_q(bm, q)
    c = center_of_mass(bm, q)
    cols = _momentum_columns(bm, qf)
    blocks = {}
    for j, (Fl, Fn) in cols.items():
        ang = Fn - xp.linalg.cross(xp.broadcast_to(c[..., :, None], Fl.shape), Fl, axis=-2)
        blocks[j] = xp.concat([Fl, ang], axis=-2)
    return reduce_columns(bm, _assemble_columns(bm, blocks, batch, 6))


def kinetic_energy(bm, q, qd, params=None):
    """Kinetic energy T (...,) in J: 1/2 sum_i v_i . I_i v_i + 1/2 sum armature qd^2 (= 1/2 qd^T M qd)."""
    xp = bm.xp
    qf, vf = full_q(bm, q), full_v(bm, qd)
    X, S = tree(bm, qf)
    vel, _ = velocities(bm, X, S, vf)
    total = 0.5 * xp.sum(bm.armature * vf * vf, axis=-1)
    for (v, w), (m, h, I) in zip(vel, body_inertias(bm, params)):
        f, n = inertia_times(xp, m, h, I, v, w)
        total = total + 0.5 * (xp.sum(v * f, axis=-1) + xp.sum(w * n, axis=-1))
    return total


def potential_energy(bm, q):
    """Gravitational potential energy V (...,) in J: -sum_i m_i g . c_i over the moving bodies
    (zero at the world origin)."""
    W = world_poses(bm, tree(bm, full_q(bm, q))[0])
    total = None
    for x in _first_moments(bm, W):
        e = -bm.xp.sum(x * bm.gravity, axis=-1)
        total = e if total is None else total + e
    return total


def energy(bm, q, qd):
    """Total mechanical energy T + V (...,) in J."""
    return kinetic_energy(bm, q, qd) + potential_energy(bm, q)

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
    flat,
    full_q,
    full_v,
    reduce_columns,
    tree,
    unflat_matrix,
    unflat_vector,
    velocities,
    world_poses,
)
from composedyn.dynamics.array_api.rnea import accelerations, body_inertias
from composedyn.dynamics.array_api.spatial import cross, dot, inertia_times, mm, mtm, mtv, mv, spread

_REFERENCES = ("world", "local")


def _reference(reference) -> bool:
    if reference not in _REFERENCES:
        raise ValueError(f"reference must be 'world' or 'local', got {reference!r}")
    return reference == "local"


def _poses(bm, q):
    """(batch, N, body world poses) of the robot's q (..., nq)."""
    batch = batch_shape(q)
    q = flat(bm.xp, q, batch)
    return batch, q.shape[0], world_poses(bm, tree(bm, full_q(bm, q))[0])


def _frame_world(bm, W, k):
    """World rotation (3, 3, N) and origin (3, N) of frame k from the body world poses W."""
    xp = bm.xp
    b, Rf, pf = bm.am.frame_body[k], bm.frame_R[k], bm.frame_p[k]
    if b < 0:
        return Rf, pf
    Rb, pb = W[b]
    return mm(xp, Rb, Rf), pb + mv(xp, Rb, pf)


def frame_pose(bm, q, frame: str):
    """World <- ``frame`` homogeneous transform (..., 4, 4) at q (..., nq) (rotation, origin in m)."""
    xp = bm.xp
    k = bm.am.frame_index(frame)
    batch, N, W = _poses(bm, q)
    R, o = _frame_world(bm, W, k)
    R, o = xp.broadcast_to(R, (3, 3, N)), xp.broadcast_to(o, (3, N))
    last = xp.broadcast_to(xp.asarray([[0.0], [0.0], [0.0], [1.0]], dtype=bm.dtype, device=bm.device)[None],
                           (1, 4, N))
    T = xp.concat([xp.concat([R, o[:, None]], axis=1), last], axis=0)
    return unflat_matrix(xp, T, batch)


def _assemble_columns(bm, blocks, N, rows):
    """(rows, nv_full, N) from per-body column blocks {body: (rows, nv_i, N)} (zeros elsewhere)."""
    xp = bm.xp
    am = bm.am
    cols = []
    for i in sorted(range(am.n), key=lambda i: am.joints[i].idx_v):
        b = blocks[i] if i in blocks else xp.zeros((rows, am.joints[i].nv, 1), dtype=bm.dtype, device=bm.device)
        cols.append(xp.broadcast_to(b, (rows, am.joints[i].nv, N)))
    return xp.concat(cols, axis=1)


def _columns_out(bm, J, batch):
    """Columns (r, nv_full, N) -> the robot's (..., r, nv)."""
    xp = bm.xp
    J = reduce_columns(bm, unflat_matrix(xp, J, (J.shape[-1],)))
    return xp.reshape(J, tuple(batch) + tuple(J.shape[-2:]))


def jacobian(bm, q, frame: str, reference: str = "world"):
    """Frame Jacobian (..., 6, nv), linear rows first: column of joint j on the frame's chain
    = (R_j S_v + (R_j S_w) x (o - p_j), R_j S_w) in world axes (``"local"``: frame axes)."""
    xp = bm.xp
    local = _reference(reference)
    k = bm.am.frame_index(frame)
    batch = batch_shape(q)
    q = flat(xp, q, batch)
    N = q.shape[0]
    X, S = tree(bm, full_q(bm, q))
    W = world_poses(bm, X)
    Rf, o = _frame_world(bm, W, k)
    b = bm.am.frame_body[k]
    blocks = {}
    for j in bm.am.ancestors(b) if b >= 0 else []:
        Rj, pj = W[j]
        Ww = mm(xp, Rj, S[j][3:])
        lin = mm(xp, Rj, S[j][:3]) + cross(xp, Ww, spread(xp, o - pj, Ww.shape[1], axis=1))
        blocks[j] = (lin, Ww)
    if local:
        blocks = {j: (mtm(xp, Rf, lin), mtm(xp, Rf, ang)) for j, (lin, ang) in blocks.items()}
    blocks = {j: xp.concat([xp.broadcast_to(x, (3,) + x.shape[1:2] + (N,)) for x in pair], axis=0)
              for j, pair in blocks.items()}
    return _columns_out(bm, _assemble_columns(bm, blocks, N, 6), batch)


def frame_velocity(bm, q, qd, frame: str, reference: str = "world"):
    """Frame twist (..., 6) = J(q) qd: origin velocity (m/s) then angular velocity (rad/s), from
    the body's velocity (v, w) at the frame point r: v + w x r."""
    return _frame_motion(bm, q, qd, None, frame, reference)


def frame_acceleration(bm, q, qd, qdd, frame: str, reference: str = "world"):
    """Classical acceleration (..., 6) of the frame origin (m/s^2) and angular acceleration
    (rad/s^2): J qdd + Jdot qd, from the body's spatial velocity (v, w) and acceleration
    (dv, dw) at the frame point r: a = dv + dw x r + w x (v + w x r)."""
    return _frame_motion(bm, q, qd, qdd, frame, reference)


def _frame_motion(bm, q, qd, qdd, frame, reference):
    """The frame's twist (``qdd`` None) or classical acceleration (..., 6), linear first."""
    xp = bm.xp
    local = _reference(reference)
    k = bm.am.frame_index(frame)
    batch = batch_shape(q, qd, qdd)
    q, qd, qdd = (flat(xp, x, batch) for x in (q, qd, qdd))
    qf, vf = full_q(bm, q), full_v(bm, qd)
    b = bm.am.frame_body[k]
    if b < 0:
        return xp.zeros(tuple(batch) + (6,), dtype=bm.dtype, device=bm.device)
    X, S = tree(bm, qf)
    vel, vJ = velocities(bm, X, S, vf)
    (v, w), r = vel[b], bm.frame_p[k]
    if qdd is None:
        lin, ang = v + cross(xp, w, r), w  # body b axes
    else:
        (dv, dw) = accelerations(bm, X, S, vel, vJ, qf, vf, full_v(bm, qdd), gravity=False)[b]
        lin, ang = dv + cross(xp, dw, r) + cross(xp, w, v + cross(xp, w, r)), dw
    if local:
        out = (mtv(xp, bm.frame_R[k], lin), mtv(xp, bm.frame_R[k], ang))
    else:
        Rb = world_poses(bm, X)[b][0]
        out = (mv(xp, Rb, lin), mv(xp, Rb, ang))
    N = q.shape[0]
    return unflat_vector(xp, xp.concat([xp.broadcast_to(x, (3, N)) for x in out], axis=0), batch)


def total_mass(bm) -> float:
    """Mass of the moving bodies (kg); ValueError when it is zero (no centre of mass)."""
    m = float(bm.am.inertia[:, 0].sum())
    if not m > 0.0:
        raise ValueError(f"{bm.am.name}: the moving bodies have no mass; the centre of mass is undefined")
    return m


def _first_moments(bm, W):
    """Per body its first moment m c (3, N) in world coordinates (kg m)."""
    return [bm.m[i] * p + mv(bm.xp, R, bm.h[i]) for i, (R, p) in enumerate(W)]


def _com(bm, W):
    out = _first_moments(bm, W)
    total = out[0]
    for x in out[1:]:
        total = total + x
    return total / total_mass(bm)


def center_of_mass(bm, q):
    """Centre of mass (..., 3) of the moving bodies in world coordinates (m) (a floating base included)."""
    batch, _, W = _poses(bm, q)
    return unflat_vector(bm.xp, _com(bm, W), batch)


def _momentum_columns(bm, q):
    """World poses, and per body j the subtree momentum per unit joint rate (Fl, Fn) (3, nv_j, N)
    in world axes, moment about the world origin: the columns of sum_i I_i J_i."""
    xp = bm.xp
    X, S = tree(bm, q)
    W = world_poses(bm, X)
    comp = composite_inertias(bm, X, body_inertias(bm))
    out = {}
    for j in range(bm.am.n):
        Fl, Fn = subtree_forces(bm, S, comp, j)
        R, p = W[j]
        Fl = mm(xp, R, Fl)
        out[j] = (Fl, mm(xp, R, Fn) + cross(xp, spread(xp, p, Fl.shape[1], axis=1), Fl))
    return W, out


def com_jacobian(bm, q):
    """d com / d v (..., 3, nv), world axes: column j = R_j (IC_j S_j)_linear / total mass."""
    batch = batch_shape(q)
    q = flat(bm.xp, q, batch)
    _, cols = _momentum_columns(bm, full_q(bm, q))
    J = _assemble_columns(bm, {j: F[0] for j, F in cols.items()}, q.shape[0], 3)
    return _columns_out(bm, J / total_mass(bm), batch)


def centroidal_momentum_matrix(bm, q):
    """A_G (..., 6, nv): centroidal momentum h_G = A_G v, linear (kg m/s) then angular about the
    centre of mass (kg m^2/s), world axes (Orin, Goswami and Lee 2013, eq. 13; Pinocchio's ccrba)."""
    xp = bm.xp
    batch = batch_shape(q)
    q = flat(xp, q, batch)
    W, cols = _momentum_columns(bm, full_q(bm, q))
    c = _com(bm, W)
    blocks = {j: xp.concat([Fl, Fn - cross(xp, spread(xp, c, Fl.shape[1], axis=1), Fl)], axis=0)
              for j, (Fl, Fn) in cols.items()}
    return _columns_out(bm, _assemble_columns(bm, blocks, q.shape[0], 6), batch)


def kinetic_energy(bm, q, qd, params=None):
    """Kinetic energy T (...,) in J: 1/2 sum_i v_i . I_i v_i + 1/2 sum armature qd^2 (= 1/2 qd^T M qd)."""
    xp = bm.xp
    batch = batch_shape(q, qd, params)
    q, qd, params = (flat(xp, x, batch) for x in (q, qd, params))
    qf, vf = full_q(bm, q), full_v(bm, qd)
    X, S = tree(bm, qf)
    vel, _ = velocities(bm, X, S, vf)
    total = 0.5 * xp.sum(bm.armature * vf * vf, axis=-1)
    for (v, w), (m, h, I) in zip(vel, body_inertias(bm, params)):
        f, n = inertia_times(xp, m, h, I, v, w)
        total = total + 0.5 * (dot(xp, v, f) + dot(xp, w, n))
    return xp.reshape(total, tuple(batch))


def potential_energy(bm, q):
    """Gravitational potential energy V (...,) in J: -sum_i m_i g . c_i over the moving bodies
    (zero at the world origin)."""
    batch, N, W = _poses(bm, q)
    V = -dot(bm.xp, _com(bm, W) * total_mass(bm), bm.gravity)
    return bm.xp.reshape(bm.xp.broadcast_to(V, (N,)), tuple(batch))


def energy(bm, q, qd):
    """Total mechanical energy T + V (...,) in J."""
    return kinetic_energy(bm, q, qd) + potential_energy(bm, q)

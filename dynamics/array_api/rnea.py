"""Inverse dynamics by the recursive Newton-Euler algorithm in body frames, on the array API.

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Springer 2008, Table 5.1 (algorithm
RNEA), with the joint model's bias ``c_J`` of eq. 4.30 and gravity as the fictitious base
acceleration ``-g`` (sec. 5.3): per body, outward

    v_i = X_i v_p + S_i qd_i,     a_i = X_i a_p + S_i qdd_i + c_J,i + v_i x S_i qd_i,
    f_i = I_i a_i + v_i x* I_i v_i,

and inward ``f_p += X_i^T f_i``, ``tau_i = S_i^T f_i``.  Spatial vectors are linear first in
body axes (:mod:`composedyn.dynamics.array_api.spatial`).  Joint friction (viscous + Coulomb,
the Robot's law) and armature are added on the model's coordinates, then dependent mimic joints
are projected (``Gv^T tau``).
"""

from __future__ import annotations

from composedyn.dynamics.array_api import joints as jm
from composedyn.dynamics.array_api.kinematics import (
    batch_shape,
    components,
    coords,
    flat,
    full_q,
    full_v,
    joint_motion,
    reduce,
    tree,
    unflat_rows,
    velocities,
)
from composedyn.dynamics.array_api.spatial import (
    combine_t,
    force_cross,
    force_to_parent,
    inertia_from_parameters,
    inertia_times,
    motion_cross,
    motion_to_child,
    mtv,
)


def body_inertias(bm, params=None):
    """Per body (m (N,), h (3, N), I (3, 3, N)) about the body origin in body axes: the model's
    (N = 1), or those of ``params`` (N, 10 n) in the regressor layout."""
    if params is None:
        return list(zip(bm.m, bm.h, bm.I))
    P = bm.xp.matrix_transpose(params)
    return [inertia_from_parameters(bm.xp, P[10 * i:10 * i + 10]) for i in range(bm.am.n)]


def check_parameters(bm, params):
    """ValueError naming the robot when ``params`` (..., 10 n) has the wrong length."""
    if params is not None and params.shape[-1] != 10 * bm.am.n:
        raise ValueError(f"{bm.am.name}: params must have 10 x {bm.am.n} bodies = {10 * bm.am.n} entries "
                         f"(regressor layout), got shape {tuple(params.shape)}")


def accelerations(bm, X, S, vel, vJ, q, v, a, gravity: bool = True):
    """Body spatial accelerations (dv_i, dw_i) (3, N) each, body axes, for full (q, v, a) (N, k)
    (v or a None: zero); ``gravity``: the base accelerates by -g (gravity's effect included)."""
    xp = bm.xp
    acc = []
    for i, joint in enumerate(bm.am.joints):
        k = bm.am.parent[i]
        terms = []
        if k < 0:
            if gravity:
                terms.append((-mtv(xp, X[i][0], bm.gravity), None))
        else:
            terms.append(motion_to_child(xp, *X[i], *acc[k]))
        if a is not None:
            terms.append(joint_motion(xp, S[i], coords(a, joint)))
        if v is not None:
            c = components(xp, jm.bias(xp, joint, coords(q, joint, velocity=False), coords(v, joint)))
            terms.append((c[:3], c[3:]))
            if k >= 0:
                terms.append(motion_cross(xp, *vel[i], *vJ[i]))
        acc.append(_sum_pairs(bm, terms))
    return acc


def _sum_pairs(bm, terms):
    """Sum of (linear, angular) pairs (None halves are zero; (3, 1) zeros when none)."""
    return _total(bm, [t[0] for t in terms if t[0] is not None]), _total(bm, [t[1] for t in terms if t[1] is not None])


def _total(bm, xs):
    if not xs:
        return bm.xp.zeros((3, 1), dtype=bm.dtype, device=bm.device)
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


def body_forces(bm, inertias, vel, acc):
    """Per body the net force (f, n) (3, N) each = I a + v x* I v, body axes (N, N m)."""
    xp = bm.xp
    out = []
    for i in range(bm.am.n):
        m, h, I = inertias[i]
        f, n = inertia_times(xp, m, h, I, *acc[i])
        if vel is not None:
            pl, pa = inertia_times(xp, m, h, I, *vel[i])
            cf, cn = force_cross(xp, *vel[i], pl, pa)
            f, n = f + cf, n + cn
        out.append((f, n))
    return out


def joint_torques(bm, X, S, forces, N):
    """Backward pass: accumulate the body forces from the leaves to the root and project them
    on the joints, tau (N, nv_full) in joint order."""
    xp = bm.xp
    forces = list(forces)
    taus = [None] * bm.am.n
    for i in range(bm.am.n - 1, -1, -1):
        f, n = forces[i]
        f6 = xp.concat([xp.broadcast_to(f, (3, N)), xp.broadcast_to(n, (3, N))], axis=0)
        taus[i] = combine_t(xp, S[i], f6)
        k = bm.am.parent[i]
        if k >= 0:
            pf, pn = force_to_parent(xp, *X[i], f, n)
            forces[k] = (forces[k][0] + pf, forces[k][1] + pn)
    order = sorted(range(bm.am.n), key=lambda i: bm.am.joints[i].idx_v)
    tau = xp.concat([xp.broadcast_to(taus[i], (taus[i].shape[0], N)) for i in order], axis=0)
    return xp.matrix_transpose(tau)


def rigid_torques(bm, q, v, a, params=None, gravity: bool = True, kinematics=None):
    """Rigid-body generalised forces (N, nv_full) of the model at full (q, v, a) (N, k) each
    (v, a None: 0), without friction and armature; ``params`` (N, 10 n) or None;
    ``kinematics``: ``tree(bm, q)`` when the caller has it already."""
    X, S = tree(bm, q) if kinematics is None else kinematics
    vel, vJ = velocities(bm, X, S, v) if v is not None else (None, None)
    acc = accelerations(bm, X, S, vel, vJ, q, v, a, gravity)
    return joint_torques(bm, X, S, body_forces(bm, body_inertias(bm, params), vel, acc), q.shape[0])


def friction_torques(bm, v, smooth_friction=None, damping=None, coulomb=None):
    """Joint friction (..., nv_full) = damping v + coulomb sgn(v) on full velocities v (the
    Robot's law); ``smooth_friction`` > 0 (rad/s or m/s) replaces sgn(v) by tanh(v / width)."""
    xp = bm.xp
    d = bm.damping if damping is None else damping
    c = bm.coulomb if coulomb is None else coulomb
    if smooth_friction is None or (isinstance(smooth_friction, (int, float)) and smooth_friction == 0):
        sgn = xp.sign(v)
    else:
        sgn = xp.tanh(v / smooth_friction)
    return d * v + c * sgn


def check_width(smooth_friction):
    """A Python-number ``smooth_friction`` checked (>= 0); arrays pass through."""
    if smooth_friction is None or not isinstance(smooth_friction, (int, float)):
        return smooth_friction
    from composedyn.dynamics.reference.friction import smooth_width

    return smooth_width(smooth_friction)


def inverse_dynamics(bm, q, qd, qdd, params=None, friction: bool = True, smooth_friction=None,
                     damping=None, coulomb=None, armature=None):
    """Generalised forces tau (..., nv) = M(q) qdd + C(q, qd) qd + g(q) + friction, the Robot's
    ``inverse_dynamics`` (armature on M's diagonal; joint torques in N m or N, a floating base's
    wrench first, base axes).

    q (..., nq), qd and qdd (..., nv), broadcasting over leading axes.  ``params`` (..., 10
    bodies): inertial parameters in the regressor layout replacing the model's; ``damping``,
    ``coulomb``, ``armature`` (..., nv_full) replace the model's joint terms; ``friction=False``
    drops friction; ``smooth_friction`` as in :func:`friction_torques`.
    """
    xp = bm.xp
    smooth_friction = check_width(smooth_friction)
    check_parameters(bm, params)
    batch = batch_shape(q, qd, qdd, params, damping, coulomb, armature)
    q, qd, qdd, params = (flat(xp, x, batch) for x in (q, qd, qdd, params))
    damping, coulomb, armature = (x if x is None or len(x.shape) < 2 else flat(xp, x, batch)
                                  for x in (damping, coulomb, armature))
    qf, vf, af = full_q(bm, q), full_v(bm, qd), full_v(bm, qdd)
    tau = rigid_torques(bm, qf, vf, af, params)
    tau = tau + (bm.armature if armature is None else armature) * af
    if friction:
        tau = tau + friction_torques(bm, vf, smooth_friction, damping, coulomb)
    return unflat_rows(xp, reduce(bm, tau), batch)


def bias_torques(bm, q, qd, params=None):
    """C(q, qd) qd + g(q) (..., nv), friction not included (the Robot's ``bias_torques``)."""
    xp = bm.xp
    check_parameters(bm, params)
    batch = batch_shape(q, qd, params)
    q, qd, params = (flat(xp, x, batch) for x in (q, qd, params))
    return unflat_rows(xp, reduce(bm, rigid_torques(bm, full_q(bm, q), full_v(bm, qd), None, params)), batch)


def gravity_torques(bm, q, params=None):
    """g(q) (..., nv): the generalised forces holding the robot still against gravity."""
    xp = bm.xp
    check_parameters(bm, params)
    batch = batch_shape(q, params)
    q, params = (flat(xp, x, batch) for x in (q, params))
    return unflat_rows(xp, reduce(bm, rigid_torques(bm, full_q(bm, q), None, None, params)), batch)

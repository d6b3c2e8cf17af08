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
    const_times,
    cross,
    cross_const,
    dot,
    dot_const,
    force_cross,
    force_to_parent,
    inertia_from_parameters,
    inertia_times,
    is_torch,
    motion_cross,
    motion_to_child,
    mtv,
    rows,
    spread,
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


def total_forces(bm, X, forces):
    """Backward pass: per body the force (f, n) (3, N) each its joint transmits, the body's own
    plus its children's, accumulated from the leaves (body axes)."""
    out = list(forces)
    for i in range(bm.am.n - 1, -1, -1):
        k = bm.am.parent[i]
        if k >= 0:
            pf, pn = force_to_parent(bm.xp, *X[i], *out[i])
            out[k] = (out[k][0] + pf, out[k][1] + pn)
    return out


def joint_torques(bm, X, S, forces, N):
    """Backward pass: accumulate the body forces from the leaves to the root and project them
    on the joints, tau (N, nv_full) in joint order."""
    return projected(bm, S, total_forces(bm, X, forces), N)


def projected(bm, S, F, N):
    """tau (N, nv_full) in joint order: the transmitted forces F_i (f, n) (3, N) each projected
    on the joints' motion subspaces S_i (tau_i = S_i^T F_i)."""
    xp = bm.xp
    taus = [combine_t(xp, S[i], xp.concat([xp.broadcast_to(f, (3, N)), xp.broadcast_to(n, (3, N))], axis=0))
            for i, (f, n) in enumerate(F)]
    return _in_joint_order(bm, taus, N)


def _in_joint_order(bm, taus, N):
    """Per-body rows (nv_i, N) -> (N, nv_full) in the order of the joints' velocity offsets."""
    xp = bm.xp
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


def rigid_passes(bm, q, v, a, params=None):
    """The RNEA's passes at full (q, v, a) (N, k) each, gravity on: (X, S, vel, acc, inertias, F),
    the joint transforms and motion subspaces (:func:`~composedyn.dynamics.array_api.kinematics.tree`),
    body velocities and accelerations (3, N) pairs, body inertias and the forces F_i (f, n) the
    joints transmit; ``projected(bm, S, F, N)`` gives the torques."""
    X, S = tree(bm, q)
    vel, vJ = velocities(bm, X, S, v)
    acc = accelerations(bm, X, S, vel, vJ, q, v, a)
    inertias = body_inertias(bm, params)
    return X, S, vel, acc, inertias, total_forces(bm, X, body_forces(bm, inertias, vel, acc))


def rigid_torques_vjp(bm, passes, v, lam, params: bool = False):
    """(q_bar, v_bar, a_bar) (N, k) each: the gradient of sum(lam * tau) with respect to the full
    (q, v, a) of :func:`rigid_passes` (gravity on), lam (N, nv_full), for the trees of
    :func:`rigid_torques_jvp`: the transpose of that tangent, written out, so that reverse mode
    costs about one more RNEA instead of a pass back through the kinematics.  ``params``: also
    the gradient (N, 10 n) with respect to the inertial parameters (regressor layout), per body
    <u_i, I(dpi) a_i> - <v_i x u_i, I(dpi) v_i> (:func:`_inertia_gradient`).

    Outward, the adjoint of the transmitted forces (a motion) u_i = X_i u_p + S_i lam_i, and joint i
    moving its child's forces gives q_bar_i += (X_i u_p) . (S_i x* F_i).  Per body, the adjoints of
    the acceleration and of the velocity from df_i = I_i da_i + dv_i x* I_i v_i + v_i x* I_i dv_i:
    alpha_i = I_i u_i and nu_i = -I_i (v_i x u_i) + (dv -> dv x* I_i v_i)^T u_i (with
    <m, v x* f> = -<v x m, f>, Featherstone RBDA eq. 2.33).  Inward, from the leaves,

        a_bar_i = S_i . alpha_i,   q_bar_i += (abar_i x S_i) . alpha_i + (v_i x S_i) . nu_i,
        nu_i += qd_i (dv -> dv x S_i)^T alpha_i,   v_bar_i = (v_i x S_i) . alpha_i + S_i . nu_i,
        alpha_p += X_i^T alpha_i,   nu_p += X_i^T nu_i

    (at the root: abar = (-R^T g, 0), and v x S = 0)."""
    xp = bm.xp
    X, _, vel, acc, inertias, F = passes
    N = lam.shape[0]
    joints, parent = bm.am.joints, bm.am.parent
    axes = [jm.subspace_columns(joint)[:, 0] for joint in joints]
    lr, vr = rows(xp, lam, axis=1), rows(xp, v, axis=1)
    u, alpha, nu, gp = [], [], [], []
    gq = [None] * bm.am.n
    for i, joint in enumerate(joints):
        k, (sv, sw) = parent[i], (axes[i][:3], axes[i][3:])
        li = lr[joint.idx_v]
        ui = const_times(xp, sv, li), const_times(xp, sw, li)
        if k >= 0:
            pv, pw = motion_to_child(xp, *X[i], *u[k])
            Ff, Fn = F[i]  # S_i x* F_i = -(F x s_w, N x s_w + F x s_v)
            gq[i] = -(dot(xp, pv, cross_const(xp, Ff, sw))
                      + dot(xp, pw, cross_const(xp, Fn, sw) + cross_const(xp, Ff, sv)))
            ui = pv + ui[0], pw + ui[1]
        u.append(ui)
        m, h, I = inertias[i]
        alpha.append(inertia_times(xp, m, h, I, *ui))
        yf, yn = inertia_times(xp, m, h, I, *vel[i])
        vu = motion_cross(xp, *vel[i], *ui)
        cv, cw = inertia_times(xp, m, h, I, *vu)
        nu.append((cross(xp, yf, ui[1]) - cv, cross(xp, yf, ui[0]) + cross(xp, yn, ui[1]) - cw))
        if params:
            gp.append(_inertia_gradient(xp, ui, acc[i]) - _inertia_gradient(xp, vu, vel[i]))
    ga, gv = [None] * bm.am.n, [None] * bm.am.n
    for i in range(bm.am.n - 1, -1, -1):
        joint, k, (sv, sw) = joints[i], parent[i], (axes[i][:3], axes[i][3:])
        (av, aw), (nv_, nw) = alpha[i], nu[i]
        ga[i] = dot_const(xp, av, sv) + dot_const(xp, aw, sw)
        if k < 0:
            g = -mtv(xp, X[i][0], bm.gravity)
            q_i = dot(xp, av, cross_const(xp, g, sw))
            gq[i] = q_i if gq[i] is None else gq[i] + q_i
            gv[i] = dot_const(xp, nv_, sv) + dot_const(xp, nw, sw)
            continue
        bv, bw = _times_axis(xp, *motion_to_child(xp, *X[i], *acc[k]), (sv, sw))
        cv, cw = _times_axis(xp, *vel[i], (sv, sw))
        qd = spread(xp, vr[joint.idx_v], 3)
        nv_ = nv_ - cross_const(xp, av, sw) * qd
        nw = nw - (cross_const(xp, av, sv) + cross_const(xp, aw, sw)) * qd
        gq[i] = gq[i] + dot(xp, bv, av) + dot(xp, bw, aw) + dot(xp, cv, nv_) + dot(xp, cw, nw)
        gv[i] = dot(xp, cv, av) + dot(xp, cw, aw) + dot_const(xp, nv_, sv) + dot_const(xp, nw, sw)
        pa, pn = force_to_parent(xp, *X[i], av, aw), force_to_parent(xp, *X[i], nv_, nw)
        alpha[k] = alpha[k][0] + pa[0], alpha[k][1] + pa[1]
        nu[k] = nu[k][0] + pn[0], nu[k][1] + pn[1]
    out = tuple(_in_joint_order(bm, [xp.reshape(xp.broadcast_to(r, (N,)), (1, N)) for r in g], N)
                for g in (gq, gv, ga))
    return (*out, xp.matrix_transpose(xp.concat(gp, axis=0))) if params else out


def _inertia_gradient(xp, x, y):
    """d (x . I(pi) y) / d pi (10, N) for motions x, y ((3, N) pairs) and the inertia I(pi) of the
    parameters pi = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (:func:`inertia_times`: I y = (m y_v + y_w x h,
    I y_w + h x y_v))."""
    (xv, xw), (yv, yw) = x, y
    a, b = rows(xp, xw, axis=0), rows(xp, yw, axis=0)
    return xp.concat([xp.reshape(dot(xp, xv, yv), (1, -1)), cross(xp, xv, yw) + cross(xp, yv, xw),
                      xp.stack([a[0] * b[0], a[0] * b[1] + a[1] * b[0], a[1] * b[1], a[0] * b[2] + a[2] * b[0],
                                a[1] * b[2] + a[2] * b[1], a[2] * b[2]], axis=0)], axis=0)


def rigid_torques_jvp(bm, q, v, a, params, dq, dv, da, dparams):
    """(tau, dtau): :func:`rigid_torques` (gravity on) at full (q, v, a) (N, k) each and its
    derivative along (dq, dv, da) (N, k) each and dparams ((N, 10 n) or None), for trees of
    joints of one coordinate whose motion subspace is constant in the child frame
    (:func:`composedyn.dynamics.array_api.crba.scalar_tree`).

    The tangent is the RNEA's own recursion, linear in the tangents with coefficients from the
    forward pass, so its transpose (a backend's reverse mode) is a pass of the RNEA's size: joint
    i turning at dq_i changes the parent -> child transform as d(X_i m) = dq_i (X_i m) x S_i
    (Featherstone RBDA eq. 2.31), whence, with vJ_i = S_i qd_i and abar_i = X_i a_parent,

        dv_i = X_i dv_p + dq_i v_i x S_i + S_i dqd_i,
        da_i = X_i da_p + dq_i abar_i x S_i + S_i dqdd_i + dv_i x vJ_i + v_i x S_i dqd_i,
        df_i = I_i da_i + dv_i x* I_i v_i + v_i x* I_i dv_i  (+ dI_i a_i + v_i x* dI_i v_i),
        dF_p += X_i^T (dF_i + dq_i S_i x* F_i),   dtau_i = S_i^T dF_i,

    F_i the force joint i transmits (:func:`total_forces`).  Reverse mode through the recursion
    instead differentiates every entry of each rotation matrix.  The tangents are read as one row
    per coordinate (``unstack``), not as slices: on JAX a slice's transpose pads the cotangent to
    the whole width, and XLA's CPU backend fuses the pads into slow loops over interleaved
    coordinates."""
    xp = bm.xp
    N = q.shape[0]
    X, _, vel, acc, inertias, F = rigid_passes(bm, q, v, a, params)
    axes = [jm.subspace_columns(joint)[:, 0] for joint in bm.am.joints]  # constants: no products by zeros
    dI = None if dparams is None else body_inertias(bm, dparams)
    dvel, dacc, dF = [], [], []
    rq, rv, ra = (rows(xp, x, axis=1) for x in (dq, dv, da))  # rows: transposed by one stack; slices would pad
    for i, joint in enumerate(bm.am.joints):
        k = bm.am.parent[i]
        s = axes[i][:3], axes[i][3:]
        dqi, dvi, dai = rq[joint.idx_q], rv[joint.idx_v], ra[joint.idx_v]
        Sdv = const_times(xp, s[0], dvi), const_times(xp, s[1], dvi)
        Sda = const_times(xp, s[0], dai), const_times(xp, s[1], dai)
        if k < 0:
            dvel.append(Sdv)
            g = -mtv(xp, X[i][0], bm.gravity)  # abar = X_i a_0 = (-R^T g, 0)
            dacc.append((cross_const(xp, g, s[1]) * spread(xp, dqi, 3) + Sda[0], Sda[1]))
        else:
            dqi, qdi = spread(xp, dqi, 3), spread(xp, v[:, joint.idx_v], 3)
            pv, pw = motion_to_child(xp, *X[i], *dvel[k])
            cv, cw = _times_axis(xp, *vel[i], s)
            dvel.append((pv + cv * dqi + Sdv[0], pw + cw * dqi + Sdv[1]))
            av, aw = motion_to_child(xp, *X[i], *dacc[k])
            bv, bw = _times_axis(xp, *motion_to_child(xp, *X[i], *acc[k]), s)
            ev, ew = _times_axis(xp, *dvel[i], s)  # dv_i x vJ_i = (dv_i x S_i) qd_i
            dacc.append((av + bv * dqi + Sda[0] + ev * qdi + cv * spread(xp, dvi, 3),
                         aw + bw * dqi + Sda[1] + ew * qdi + cw * spread(xp, dvi, 3)))
        m, h, I = inertias[i]
        f, n = inertia_times(xp, m, h, I, *dacc[i])
        for x, y in ((dvel[i], inertia_times(xp, m, h, I, *vel[i])), (vel[i], inertia_times(xp, m, h, I, *dvel[i]))):
            cf, cn = force_cross(xp, *x, *y)
            f, n = f + cf, n + cn
        if dI is not None:
            gf, gn = inertia_times(xp, *dI[i], *acc[i])
            cf, cn = force_cross(xp, *vel[i], *inertia_times(xp, *dI[i], *vel[i]))
            f, n = f + gf + cf, n + gn + cn
        dF.append((f, n))
    taus, dtaus = [None] * bm.am.n, [None] * bm.am.n
    for i in range(bm.am.n - 1, -1, -1):
        joint, s = bm.am.joints[i], (axes[i][:3], axes[i][3:])
        (f, n), (Ff, Fn) = dF[i], F[i]
        taus[i] = dot_const(xp, Ff, s[0]) + dot_const(xp, Fn, s[1])
        dtaus[i] = dot_const(xp, f, s[0]) + dot_const(xp, n, s[1])
        k = bm.am.parent[i]
        if k >= 0:  # S_i x* F_i = (s_w x F, s_w x N + s_v x F) = -(F x s_w, N x s_w + F x s_v)
            dqi = spread(xp, rq[joint.idx_q], 3)
            cf, cn = cross_const(xp, Ff, s[1]), cross_const(xp, Fn, s[1]) + cross_const(xp, Ff, s[0])
            pf, pn = force_to_parent(xp, *X[i], f - cf * dqi, n - cn * dqi)
            dF[k] = (dF[k][0] + pf, dF[k][1] + pn)
    trows = [xp.reshape(xp.broadcast_to(t, (N,)), (1, N)) for t in taus]
    drows = [xp.reshape(xp.broadcast_to(t, (N,)), (1, N)) for t in dtaus]
    return _in_joint_order(bm, trows, N), _in_joint_order(bm, drows, N)


def _times_axis(xp, v, w, s):
    """The motion cross product (v, w) x S for a constant axis S = (s_v, s_w) (NumPy 3-vectors):
    (w x s_v + v x s_w, w x s_w)."""
    return cross_const(xp, w, s[0]) + cross_const(xp, v, s[1]), cross_const(xp, w, s[1])


def friction_torques(bm, v, smooth_friction=None, damping=None, coulomb=None):
    """Joint friction (..., nv_full) = damping v + coulomb sgn(v) on full velocities v (the
    Robot's law); ``smooth_friction`` > 0 (rad/s or m/s) replaces sgn(v) by tanh(v / width)."""
    xp = bm.xp
    d = bm.damping if damping is None else damping
    c = bm.coulomb if coulomb is None else coulomb
    if smooth_friction is None or (isinstance(smooth_friction, (int, float)) and smooth_friction == 0):
        sgn = sign(xp, v)
    else:
        sgn = xp.tanh(v / smooth_friction)
    return d * v + c * sgn


def sign(xp, v):
    """sgn(v), NaN where v is NaN.  On PyTorch by ``where`` (the tensor's own ``sign`` gives 0 at
    NaN, and array-api-compat's mends that by an assignment through a boolean mask, which the
    ``torch.func`` transforms cannot batch)."""
    return xp.where(xp.isnan(v), v, v.sign()) if is_torch(xp) else xp.sign(v)


def check_width(smooth_friction):
    """A Python-number ``smooth_friction`` checked (>= 0); arrays pass through."""
    if smooth_friction is None or not isinstance(smooth_friction, (int, float)):
        return smooth_friction
    from composedyn.dynamics.reference.friction import smooth_width

    return smooth_width(smooth_friction)


def inverse_dynamics(bm, q, qd, qdd, params=None, friction: bool = True, smooth_friction=None,
                     damping=None, coulomb=None, armature=None, rigid=None):
    """Generalised forces tau (..., nv) = M(q) qdd + C(q, qd) qd + g(q) + friction, the Robot's
    ``inverse_dynamics`` (armature on M's diagonal; joint torques in N m or N, a floating base's
    wrench first, base axes).

    q (..., nq), qd and qdd (..., nv), broadcasting over leading axes.  ``params`` (..., 10
    bodies): inertial parameters in the regressor layout replacing the model's; ``damping``,
    ``coulomb``, ``armature`` (..., nv_full) replace the model's joint terms; ``friction=False``
    drops friction; ``smooth_friction`` as in :func:`friction_torques`; ``rigid``: a replacement
    of :func:`rigid_torques` taking (bm, q, v, a, params) (a backend's derivative rule).
    """
    xp = bm.xp
    smooth_friction = check_width(smooth_friction)
    check_parameters(bm, params)
    batch = batch_shape(q, qd, qdd, params, damping, coulomb, armature)
    q, qd, qdd, params = (flat(xp, x, batch) for x in (q, qd, qdd, params))
    damping, coulomb, armature = (x if x is None or len(x.shape) < 2 else flat(xp, x, batch)
                                  for x in (damping, coulomb, armature))
    qf, vf, af = full_q(bm, q), full_v(bm, qd), full_v(bm, qdd)
    tau = (rigid or rigid_torques)(bm, qf, vf, af, params)
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

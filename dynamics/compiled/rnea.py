"""Compiled recursive Newton-Euler inverse dynamics in body coordinates.

Featherstone's ``ID`` with spatial vectors (angular first) in each body's
joint frame.  Body i has parent k, pose (R, p) in k's frame (x_k = R x_i + p,
R = T Rot(a, q_i) for a revolute joint, T = tree_R; p = tree_p + q_i T a for a
prismatic one), motion subspace S = (a, 0) revolute or (0, a) prismatic:

    forward   v_i = X_i v_k + S qd_i                       X (w, u) = (R^T w, R^T (u + w x p))
              a_i = X_i a_k + S qdd_i + v_i x S qd_i       (w, u) x (s, t) = (w x s, w x t + u x s)
              f_i = I_i a_i + v_i x* (I_i v_i) - f_ext_i   (w, u) x* (n, f) = (w x n + u x f, w x f)
              with I (w, u) = (Io w + h x u, m u - h x w)  (h = m c, Io about the body origin)
              and the base at v = 0, a = (0, -g) (gravity as a fictitious base acceleration)
    backward  tau_i = S . f_i  (+ armature qdd, damping qd, Coulomb sgn(qd) on request)
              f_k += X_i^T f_i,  X^T (n, f) = (R n + p x R f, R f)

Same result as :func:`composedyn.dynamics.reference.rnea.rnea` (world coordinates).
Joint kinematics (pose, S, S^T f, v x S qd) come from :mod:`.joint`.

How the code is written, for speed:

* every per-body quantity (pose, v, a, f) lives in local scalars, passed
  through small helpers that take and return tuples (inlined by LLVM); the
  scratch array is written once per body at the end of its step and read only
  for the parent's v, a (forward) and the pose and f (backward).  Writing
  through the scratch array in between forces reloads of everything, since
  ``w``, ``fm`` and ``out`` may alias as far as LLVM knows;
* no array views (``w[i]``, ``w[i, 0:12]``) and no call to a non-inlined
  function in ``rnea_into``, and no ``range(n - 1, -1, -1)``: each of them
  makes numba keep reference counting of the array arguments (NRT_incref /
  NRT_decref calls, atomic, at every call and every view);
* no ``fastmath`` (fused multiply-add would change the last bits: the kernel
  adds the armature and friction exactly as the NumPy path does); the joint
  model's kinematics helpers fuse multiply-adds as in every kernel (:mod:`.joint`).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    free_root,
    free_root_force,
    free_root_placement,
    free_root_velocity,
    joint_angle,
    joint_bias,
    joint_component,
    joint_force,
    joint_motion,
    joint_placement,
    joint_rotation_row,
    joint_scalar,
    joint_translation,
    joint_velocity,
    joint_velocity_product,
    motion_cross,
    rot,
    rot_t,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import ARM, DAMP, FRIC, GRAV, IO, IQ, IV, MASS, NO_FW, NV, PARENT, H
from composedyn.dynamics.joint_types import TreeForm
from composedyn.dynamics.reference import rnea as reference
from composedyn.dynamics.reference.friction import friction_torques

# per-body scratch row (the base in row n): pose R row-major 0:9 and p 9:12, world pose
# XW:XW+12 (only with external forces), v, a and f (angular first)
SCRATCH = 42
XW, V, A, F = 12, 24, 30, 36


@njit(cache=True)
def _to_child(R, p0, p1, p2, w0, w1, w2, u0, u1, u2):
    """Parent-frame motion (w, u) -> child frame: (R^T w, R^T (u + w x p))."""
    c0, c1, c2 = cross(w0, w1, w2, p0, p1, p2)
    x0, x1, x2 = rot_t(R, w0, w1, w2)
    y0, y1, y2 = rot_t(R, u0 + c0, u1 + c1, u2 + c2)
    return x0, x1, x2, y0, y1, y2


@njit(cache=True)
def _inertia(fm, i, w0, w1, w2, u0, u1, u2):
    """I_i (w, u) = (Io w + h x u, m u - h x w)."""
    m, h0, h1, h2 = fm[i, MASS], fm[i, H], fm[i, H + 1], fm[i, H + 2]
    return (fm[i, IO] * w0 + fm[i, IO + 1] * w1 + fm[i, IO + 2] * w2 + (h1 * u2 - h2 * u1),
            fm[i, IO + 3] * w0 + fm[i, IO + 4] * w1 + fm[i, IO + 5] * w2 + (h2 * u0 - h0 * u2),
            fm[i, IO + 6] * w0 + fm[i, IO + 7] * w1 + fm[i, IO + 8] * w2 + (h0 * u1 - h1 * u0),
            m * u0 - (h1 * w2 - h2 * w1), m * u1 - (h2 * w0 - h0 * w2), m * u2 - (h0 * w1 - h1 * w0))


@njit(cache=True)
def _world_row(w, i, k, r):
    """Row r of body i's world pose: (R_w, p_w)[r] = (R_k R)[r], p_k[r] + (R_k p)[r] (k < 0: own pose)."""
    j = 3 * r
    if k < 0:
        return w[i, j], w[i, j + 1], w[i, j + 2], w[i, 9 + r]
    k0, k1, k2 = w[k, XW + j], w[k, XW + j + 1], w[k, XW + j + 2]
    return (k0 * w[i, 0] + k1 * w[i, 3] + k2 * w[i, 6],
            k0 * w[i, 1] + k1 * w[i, 4] + k2 * w[i, 7],
            k0 * w[i, 2] + k1 * w[i, 5] + k2 * w[i, 8],
            w[k, XW + 9 + r] + k0 * w[i, 9] + k1 * w[i, 10] + k2 * w[i, 11])


@njit(cache=True)
def _world_force(Rw, p0, p1, p2, fw, i):
    """World force fw_i (moment about the world origin) in body axes about the body origin:
    (Rw^T (n - p x f), Rw^T f)."""
    g0, g1, g2 = fw[i, 3], fw[i, 4], fw[i, 5]
    c0, c1, c2 = cross(p0, p1, p2, g0, g1, g2)
    n0, n1, n2 = rot_t(Rw, fw[i, 0] - c0, fw[i, 1] - c1, fw[i, 2] - c2)
    f0, f1, f2 = rot_t(Rw, g0, g1, g2)
    return n0, n1, n2, f0, f1, f2

@njit(cache=True, inline="always")
def _with_extras(fm, qd, qdd, d, extra, tau):
    """tau of velocity coordinate d with the extras (``extra`` bits: 1 armature qdd, 2 damping qd +
    Coulomb sgn(qd)) added one after the other, as the NumPy path does (the same bits)."""
    if extra & 1:
        tau += fm[d, ARM] * qdd[d]
    if extra & 2:
        x = qd[d]
        sgn = 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
        tau += fm[d, DAMP] * x + fm[d, FRIC] * sgn
    return tau


def _rnea(form: TreeForm):
    """The RNEA kernel compiled for one form of tree (:func:`composedyn.dynamics.joint_types.tree_form`):
    revolute and prismatic joints only (the joint model's scalar parts, which LLVM inlines; body i's
    coordinate is q[i]), a free flyer at the root and such joints after it (body 0 through the
    joint model's ``free_root_*`` functions), or joints of every kind (the joint model's general
    functions).  One source, three machine codes: ``form`` is a constant of the compiled code, so
    none carries the others' branches."""
    general, root = form == TreeForm.GENERAL, form == TreeForm.FREE_ROOT
    offsets = general or root  # body i's coordinates at im[i, IQ], im[i, IV] rather than q[i], v[i]

    @njit(cache=True)
    def rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, w):
        n = im.shape[0]
        for c in range(V, A + 6):  # base: v = 0, a = (0, -g)
            w[n, c] = 0.0
        if grav and n > 0:
            for c in range(3):
                w[n, A + 3 + c] = -fm[0, GRAV + c]
        use_fw = fw.shape[0] == n and n > 0
        for i in range(n):  # forward: pose, v, a, f of body i
            k = im[i, PARENT]
            kp = n if k < 0 else k
            other = general and not joint_scalar(im, i)  # a joint the scalar joint model does not take
            free = root and i == 0  # the root's free flyer
            if free:
                R, (p0, p1, p2) = free_root_placement(fm, q)
            elif other:
                R, (p0, p1, p2) = joint_placement(im, fm, i, q)
            else:
                qi = q[im[i, IQ]] if offsets else q[i]
                s, c = joint_angle(im, i, qi)  # pose: the joint model's parts (joint_pose is too big to inline)
                R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
                R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
                R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
                R = (R0, R1, R2, R3, R4, R5, R6, R7, R8)
                p0, p1, p2 = joint_translation(im, fm, i, qi)
            vw0, vw1, vw2, vu0, vu1, vu2 = _to_child(R, p0, p1, p2, w[kp, V], w[kp, V + 1], w[kp, V + 2],
                                                     w[kp, V + 3], w[kp, V + 4], w[kp, V + 5])
            aw0, aw1, aw2, au0, au1, au2 = _to_child(R, p0, p1, p2, w[kp, A], w[kp, A + 1], w[kp, A + 2],
                                                     w[kp, A + 3], w[kp, A + 4], w[kp, A + 5])
            iv = im[i, IV] if offsets else i
            if free:
                s0, s1, s2, s3, s4, s5 = free_root_velocity(qd)
            elif other:  # v += S qd
                s0, s1, s2, s3, s4, s5 = joint_velocity(im, fm, i, q, qd)
            else:
                qdi = qd[iv]
                s0, s1, s2, s3, s4, s5 = joint_motion(im, fm, i, qdi)
            vw0, vw1, vw2, vu0, vu1, vu2 = vw0 + s0, vw1 + s1, vw2 + s2, vu0 + s3, vu1 + s4, vu2 + s5
            if free:  # a += S qdd + v x S qd
                c0, c1, c2, c3, c4, c5 = motion_cross(vw0, vw1, vw2, vu0, vu1, vu2, s0, s1, s2, s3, s4, s5)
                s0, s1, s2, s3, s4, s5 = free_root_velocity(qdd)
            elif other:  # a += S qdd + v x S qd (+ S' qd)
                s0, s1, s2, s3, s4, s5 = joint_velocity(im, fm, i, q, qdd)
                c0, c1, c2, c3, c4, c5 = joint_velocity_product(im, fm, i, q, vw0, vw1, vw2, vu0, vu1, vu2, qd)
            else:
                s0, s1, s2, s3, s4, s5 = joint_motion(im, fm, i, qdd[iv])
                c0, c1, c2, c3, c4, c5 = joint_bias(im, fm, i, vw0, vw1, vw2, vu0, vu1, vu2, qdi)
            aw0, aw1, aw2 = aw0 + (s0 + c0), aw1 + (s1 + c1), aw2 + (s2 + c2)
            au0, au1, au2 = au0 + (s3 + c3), au1 + (s4 + c4), au2 + (s5 + c5)
            # f = I a + v x* (k, l) with (k, l) = I v:  v x* (k, l) = (w x k + u x l, w x l)
            k0, k1, k2, l0, l1, l2 = _inertia(fm, i, vw0, vw1, vw2, vu0, vu1, vu2)
            n0, n1, n2, f0, f1, f2 = _inertia(fm, i, aw0, aw1, aw2, au0, au1, au2)
            x0, x1, x2 = cross(vw0, vw1, vw2, k0, k1, k2)
            y0, y1, y2 = cross(vu0, vu1, vu2, l0, l1, l2)
            z0, z1, z2 = cross(vw0, vw1, vw2, l0, l1, l2)
            n0, n1, n2 = n0 + (x0 + y0), n1 + (x1 + y1), n2 + (x2 + y2)
            f0, f1, f2 = f0 + z0, f1 + z1, f2 + z2
            # stores, all at the end: what the children (pose, v, a) and the backward pass (f) read
            w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], w[i, 6], w[i, 7], w[i, 8] = R
            w[i, 9], w[i, 10], w[i, 11] = p0, p1, p2
            w[i, V], w[i, V + 1], w[i, V + 2] = vw0, vw1, vw2
            w[i, V + 3], w[i, V + 4], w[i, V + 5] = vu0, vu1, vu2
            w[i, A], w[i, A + 1], w[i, A + 2] = aw0, aw1, aw2
            w[i, A + 3], w[i, A + 4], w[i, A + 5] = au0, au1, au2
            if use_fw:  # world pose (kept for the children), then f -= f_ext in body coordinates
                W0, W1, W2, P0 = _world_row(w, i, k, 0)
                W3, W4, W5, P1 = _world_row(w, i, k, 1)
                W6, W7, W8, P2 = _world_row(w, i, k, 2)
                w[i, XW], w[i, XW + 1], w[i, XW + 2], w[i, XW + 3], w[i, XW + 4] = W0, W1, W2, W3, W4
                w[i, XW + 5], w[i, XW + 6], w[i, XW + 7], w[i, XW + 8] = W5, W6, W7, W8
                w[i, XW + 9], w[i, XW + 10], w[i, XW + 11] = P0, P1, P2
                e0, e1, e2, e3, e4, e5 = _world_force((W0, W1, W2, W3, W4, W5, W6, W7, W8), P0, P1, P2, fw, i)
                n0, n1, n2, f0, f1, f2 = n0 - e0, n1 - e1, n2 - e2, f0 - e3, f1 - e4, f2 - e5
            w[i, F], w[i, F + 1], w[i, F + 2], w[i, F + 3], w[i, F + 4], w[i, F + 5] = n0, n1, n2, f0, f1, f2
        for j in range(n):  # backward, i = n-1 .. 0 (a forward range: see the module docstring)
            i = n - 1 - j
            k = im[i, PARENT]
            n0, n1, n2, f0, f1, f2 = w[i, F], w[i, F + 1], w[i, F + 2], w[i, F + 3], w[i, F + 4], w[i, F + 5]
            iv = im[i, IV] if offsets else i
            if root and i == 0:
                t0, t1, t2, t3, t4, t5 = free_root_force(n0, n1, n2, f0, f1, f2)
                out[0] = _with_extras(fm, qd, qdd, 0, extra, t0)
                out[1] = _with_extras(fm, qd, qdd, 1, extra, t1)
                out[2] = _with_extras(fm, qd, qdd, 2, extra, t2)
                out[3] = _with_extras(fm, qd, qdd, 3, extra, t3)
                out[4] = _with_extras(fm, qd, qdd, 4, extra, t4)
                out[5] = _with_extras(fm, qd, qdd, 5, extra, t5)
            elif general and not joint_scalar(im, i):  # tau = S^T f, one component per velocity coordinate
                for e in range(im[i, NV]):
                    out[iv + e] = _with_extras(fm, qd, qdd, iv + e, extra,
                                               joint_component(im, fm, i, q, e, n0, n1, n2, f0, f1, f2))
            else:  # (the extras written out here: through _with_extras the entry is markedly slower)
                tau = joint_force(im, fm, i, n0, n1, n2, f0, f1, f2)  # S^T f
                if extra & 1:  # + armature qdd
                    tau += fm[iv, ARM] * qdd[iv]
                if extra & 2:  # + damping qd + Coulomb sgn(qd)
                    x = qd[iv]
                    sgn = 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
                    tau += fm[iv, DAMP] * x + fm[iv, FRIC] * sgn
                out[iv] = tau
            if k >= 0:  # f_k += (R n + p x R f, R f)
                R = (w[i, 0], w[i, 1], w[i, 2], w[i, 3], w[i, 4], w[i, 5], w[i, 6], w[i, 7], w[i, 8])
                g0, g1, g2 = rot(R, f0, f1, f2)
                m0, m1, m2 = rot(R, n0, n1, n2)
                c0, c1, c2 = cross(w[i, 9], w[i, 10], w[i, 11], g0, g1, g2)
                w[k, F] += m0 + c0
                w[k, F + 1] += m1 + c1
                w[k, F + 2] += m2 + c2
                w[k, F + 3] += g0
                w[k, F + 4] += g1
                w[k, F + 5] += g2

    return rnea_into


_RNEA_SCALAR, _RNEA_ROOT, _RNEA_GENERAL = _rnea(TreeForm.SCALAR), _rnea(TreeForm.FREE_ROOT), _rnea(TreeForm.GENERAL)


@njit(cache=True, inline="always")
def rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, w):
    """tau (nv,) into ``out`` for one sample, scratch ``w`` (n + 1, SCRATCH) for n bodies; q (nq,),
    qd and qdd (nv,) (joints of every kind: :mod:`.joint`).

    fw: (n, 6) world spatial forces on the bodies, or shape (0, 6) for none.  grav: 1 to
    include gravity.  extra: bit flags, 1 adds armature qdd, 2 adds damping qd + friction
    sgn(qd); 3 gives the Robot's inverse dynamics.  See the module docstring for the
    formulas and why the code is written this way."""
    if scalar_joints(im):
        _RNEA_SCALAR(im, fm, q, qd, qdd, fw, grav, extra, out, w)
    elif free_root(im):
        _RNEA_ROOT(im, fm, q, qd, qdd, fw, grav, extra, out, w)
    else:
        _RNEA_GENERAL(im, fm, q, qd, qdd, fw, grav, extra, out, w)


# ---- declarations (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def inverse_dynamics(im, fm, q, v, a, f_world, friction, out, w):
    """The Robot's inverse dynamics into out (n,): tau = M a + C v + g (armature in M) + joint friction
    (damping v + Coulomb sgn(v)) when ``friction`` is not 0, minus the external wrenches
    ``f_world`` (n, 6) (moment about the world origin first; (0, 6): none).  Status 4: a joint
    without orientation (a zero quaternion)."""
    if not scalar_joints(im) and not configuration_readable(im, q):
        return 4
    rnea_into(im, fm, q, v, a, f_world, 1, 3 if friction else 1, out, w)
    return 0


def robot_inverse_dynamics(model, q, v, a, f_world=None, friction=1):
    """NumPy reference of :data:`INVERSE_DYNAMICS` (the rigid-body RNEA plus armature a and friction)."""
    tau = reference.rnea(model, q, v, a, f_world=f_world) + model.armature * np.asarray(a, float)
    return tau + friction_torques(model, v) if friction else tau


@njit(cache=True, inline="always")
def bias_torques(im, fm, q, v, out, w, zero):
    """h = C(q, v) v + g(q) (n,) into out, no friction: inverse dynamics at a = 0; status 4: a zero
    quaternion."""
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    for i in range(zero.shape[0]):
        zero[i] = 0.0
    rnea_into(im, fm, q, v, zero, NO_FW, 1, 0, out, w)
    return 0


_QV = (("q", "nq"), ("v", "nv"))
INVERSE_DYNAMICS = Quantity("inverse_dynamics", inverse_dynamics, inputs=_QV + (("a", "nv"),),
                            extras=(("f_world", 6),), results=(("nv",),), options=(("friction", 1),),
                            scratch=(("nv+1", SCRATCH),), reference=robot_inverse_dynamics)
BIAS_TORQUES = Quantity("bias_torques", bias_torques, inputs=_QV, results=(("nv",),),
                        scratch=(("nv+1", SCRATCH), ("nv",)),
                        reference=lambda model, q, v: reference.rnea(model, q, v, np.zeros(np.shape(v))))

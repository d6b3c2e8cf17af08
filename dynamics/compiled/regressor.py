"""Compiled joint torque regressor Y (nv, 10 n) with tau = Y pi, in body coordinates (n bodies).

The formulas of :mod:`composedyn.dynamics.reference.regressor` (the NumPy reference):
a forward pass gives each body's pose (R, p) in its parent frame, body-frame
velocity (w, u) and spatial acceleration (dw, du) (base at v = 0, a = (0, -g));
body i's force matrix A_i (6, 10) (spatial force = A_i pi_i) is then carried
up its chain of ancestors j = i, parent(i), ... with X^T (n, f) = (R n + p x R f,
R f), and each joint takes the rows of its velocity coordinates,
Y[rows of j, 10 i : 10 i + 10] = S_j^T A (a column of S, :func:`.joint.joint_column`, times A).
Joint kinematics, for joints of every kind (several coordinates, a motion
subspace that depends on q), come from :mod:`.joint`.  Cost O(n d) for a tree
of depth d.
"""

from __future__ import annotations

from composedyn.dynamics.compiled.declare import Quantity
from composedyn.dynamics.compiled.jit import njit
from composedyn.dynamics.compiled.joint import (
    configuration_readable,
    cross,
    joint_column,
    joint_motion_of,
    joint_offset,
    joint_offset_of,
    joint_rotation_row,
    joint_sincos,
    joint_turn,
    joint_velocity,
    joint_velocity_product,
    joint_velocity_product_of,
    motion_dot,
    rot,
    rot_t,
    scalar_joints,
)
from composedyn.dynamics.compiled.layout import GRAV, IQ, IV, NV, PARENT
from composedyn.dynamics.reference.regressor import regressor

SCRATCH = 24  # per body (base in row n): R 0:9, p 9:12, v 12:18, a 18:24 (angular first)
V, A = 12, 18


@njit(cache=True)
def _force_matrix(F, w0, w1, w2, d0, d1, d2, a0, a1, a2):
    """F (6, 10) = body spatial force per parameter: n = L(dw) I + w x L(w) I + h x a,
    f = m a + (dw x + (w x)^2) h (w angular velocity, dw angular and a classical linear acceleration)."""
    for r in range(6):
        for c in range(10):
            F[r, c] = 0.0
    # h x a = -a x h: columns 1..3 of the moment rows
    F[0, 2], F[0, 3] = a2, -a1
    F[1, 1], F[1, 3] = -a2, a0
    F[2, 1], F[2, 2] = a1, -a0
    # L(dw) + [w]x L(w) on (Ixx, Ixy, Iyy, Ixz, Iyz, Izz): columns 4..9
    for k in range(6):  # column k of L(x) is e.g. (x0, 0, 0) for Ixx
        if k == 0:
            l0, l1, l2, m0, m1, m2 = d0, 0.0, 0.0, w0, 0.0, 0.0
        elif k == 1:
            l0, l1, l2, m0, m1, m2 = d1, d0, 0.0, w1, w0, 0.0
        elif k == 2:
            l0, l1, l2, m0, m1, m2 = 0.0, d1, 0.0, 0.0, w1, 0.0
        elif k == 3:
            l0, l1, l2, m0, m1, m2 = d2, 0.0, d0, w2, 0.0, w0
        elif k == 4:
            l0, l1, l2, m0, m1, m2 = 0.0, d2, d1, 0.0, w2, w1
        else:
            l0, l1, l2, m0, m1, m2 = 0.0, 0.0, d2, 0.0, 0.0, w2
        c0, c1, c2 = cross(w0, w1, w2, m0, m1, m2)
        F[0, 4 + k], F[1, 4 + k], F[2, 4 + k] = l0 + c0, l1 + c1, l2 + c2
    F[3, 0], F[4, 0], F[5, 0] = a0, a1, a2
    for k in range(3):  # (dw x + w x w x) e_k
        e0, e1, e2 = (1.0 if k == 0 else 0.0), (1.0 if k == 1 else 0.0), (1.0 if k == 2 else 0.0)
        x0, x1, x2 = cross(d0, d1, d2, e0, e1, e2)
        y0, y1, y2 = cross(w0, w1, w2, e0, e1, e2)
        z0, z1, z2 = cross(w0, w1, w2, y0, y1, y2)
        F[3, 1 + k], F[4, 1 + k], F[5, 1 + k] = x0 + z0, x1 + z1, x2 + z2


@njit(cache=True)
def regressor_into(im, fm, q, qd, qdd, grav, out, w, F):
    """Y (nv, 10 n) into ``out`` (overwritten) for n bodies, q (nq,), qd and qdd (nv,) (joints of
    every kind: :mod:`.joint`); scratch w (n + 1, SCRATCH) or more rows, F (6, 10)."""
    n = im.shape[0]
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            out[r, c] = 0.0
    for c in range(V, A + 6):
        w[n, c] = 0.0
    if grav and n > 0:
        for c in range(3):
            w[n, A + 3 + c] = -fm[0, GRAV + c]
    for i in range(n):
        k = im[i, PARENT]
        kp = n if k < 0 else k
        s, c = joint_sincos(im, i, q)  # pose: the joint model's parts
        R0, R1, R2 = joint_rotation_row(im, fm, i, 0, s, c)
        R3, R4, R5 = joint_rotation_row(im, fm, i, 1, s, c)
        R6, R7, R8 = joint_rotation_row(im, fm, i, 2, s, c)
        if im[i, NV] == 1:  # one coordinate: the joint model's functions that LLVM inlines
            R = (R0, R1, R2, R3, R4, R5, R6, R7, R8)
            p0, p1, p2 = joint_offset_of(im, fm, i, q[im[i, IQ]])
        else:
            R = joint_turn(im, fm, i, q, (R0, R1, R2, R3, R4, R5, R6, R7, R8))
            p0, p1, p2 = joint_offset(im, fm, i, q)
        # parent motion to this frame: (R^T w, R^T (u + w x p))
        pw0, pw1, pw2 = w[kp, V], w[kp, V + 1], w[kp, V + 2]
        c0, c1, c2 = cross(pw0, pw1, pw2, p0, p1, p2)
        vw0, vw1, vw2 = rot_t(R, pw0, pw1, pw2)
        vu0, vu1, vu2 = rot_t(R, w[kp, V + 3] + c0, w[kp, V + 4] + c1, w[kp, V + 5] + c2)
        pa0, pa1, pa2 = w[kp, A], w[kp, A + 1], w[kp, A + 2]
        c0, c1, c2 = cross(pa0, pa1, pa2, p0, p1, p2)
        aw0, aw1, aw2 = rot_t(R, pa0, pa1, pa2)
        au0, au1, au2 = rot_t(R, w[kp, A + 3] + c0, w[kp, A + 4] + c1, w[kp, A + 5] + c2)
        # v += S qd;  a += S qdd + (v x S qd + S' qd)
        if im[i, NV] == 1:
            iv = im[i, IV]
            s0, s1, s2, t0, t1, t2 = joint_motion_of(im, fm, i, qd[iv])
            vw0, vw1, vw2, vu0, vu1, vu2 = vw0 + s0, vw1 + s1, vw2 + s2, vu0 + t0, vu1 + t1, vu2 + t2
            e0, e1, e2, g0, g1, g2 = joint_motion_of(im, fm, i, qdd[iv])
            x0, x1, x2, y0, y1, y2 = joint_velocity_product_of(im, fm, i, vw0, vw1, vw2, vu0, vu1, vu2, qd[iv])
        else:
            s0, s1, s2, t0, t1, t2 = joint_velocity(im, fm, i, q, qd)
            vw0, vw1, vw2, vu0, vu1, vu2 = vw0 + s0, vw1 + s1, vw2 + s2, vu0 + t0, vu1 + t1, vu2 + t2
            e0, e1, e2, g0, g1, g2 = joint_velocity(im, fm, i, q, qdd)
            x0, x1, x2, y0, y1, y2 = joint_velocity_product(im, fm, i, q, vw0, vw1, vw2, vu0, vu1, vu2, qd)
        aw0, aw1, aw2 = aw0 + e0 + x0, aw1 + e1 + x1, aw2 + e2 + x2
        au0, au1, au2 = au0 + g0 + y0, au1 + g1 + y1, au2 + g2 + y2
        for c in range(9):
            w[i, c] = R[c]
        w[i, 9], w[i, 10], w[i, 11] = p0, p1, p2
        w[i, V], w[i, V + 1], w[i, V + 2], w[i, V + 3], w[i, V + 4], w[i, V + 5] = vw0, vw1, vw2, vu0, vu1, vu2
        w[i, A], w[i, A + 1], w[i, A + 2], w[i, A + 3], w[i, A + 4], w[i, A + 5] = aw0, aw1, aw2, au0, au1, au2
        l0, l1, l2 = cross(vw0, vw1, vw2, vu0, vu1, vu2)  # classical acceleration du + w x u
        _force_matrix(F, vw0, vw1, vw2, aw0, aw1, aw2, au0 + l0, au1 + l1, au2 + l2)
        j = i
        while j >= 0:  # carry A_i up the chain: Y[rows of joint j, block i] = S_j^T F, F <- X_j^T F
            jv = im[j, IV]
            for e in range(im[j, NV]):
                if im[j, NV] == 1:  # S once per coordinate, not per column
                    s0, s1, s2, s3, s4, s5 = joint_motion_of(im, fm, j, 1.0)
                else:
                    s0, s1, s2, s3, s4, s5 = joint_column(im, fm, j, q, e)
                for c in range(10):
                    out[jv + e, 10 * i + c] = motion_dot(s0, s1, s2, s3, s4, s5, F[0, c], F[1, c], F[2, c],
                                                         F[3, c], F[4, c], F[5, c])
            if im[j, PARENT] < 0:
                break
            Rj = (w[j, 0], w[j, 1], w[j, 2], w[j, 3], w[j, 4], w[j, 5], w[j, 6], w[j, 7], w[j, 8])
            for c in range(10):
                f0, f1, f2 = rot(Rj, F[3, c], F[4, c], F[5, c])
                n0, n1, n2 = rot(Rj, F[0, c], F[1, c], F[2, c])
                x0, x1, x2 = cross(w[j, 9], w[j, 10], w[j, 11], f0, f1, f2)
                F[0, c], F[1, c], F[2, c] = n0 + x0, n1 + x1, n2 + x2
                F[3, c], F[4, c], F[5, c] = f0, f1, f2
            j = im[j, PARENT]


# ---- declaration (composedyn.dynamics.compiled.declare) ----
@njit(cache=True, inline="always")
def joint_torque_regressor(im, fm, q, v, a, out, w, F):
    """Y (nv, 10 n) into out for n bodies: tau = Y pi, gravity included (no friction, no armature);
    status 4: a zero quaternion."""
    if not scalar_joints(im) and not configuration_readable(im, q):  # a zero quaternion
        return 4
    regressor_into(im, fm, q, v, a, 1, out, w, F)
    return 0


REGRESSOR = Quantity("regressor", joint_torque_regressor, inputs=(("q", "nq"), ("v", "nv"), ("a", "nv")),
                     results=(("nv", "10n"),), scratch=(("nv+1", SCRATCH), (6, 10)), reference=regressor)

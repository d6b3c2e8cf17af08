"""Derivatives of a ``FloatingRobot``'s dynamics (the methods delegate here).

Configurations move on the group: a perturbation ``dq`` (nv,) of q is
``q ⊕ dq = robot.integrate(q, dq)`` (the base moved by exp(dq_base) on the
right, in base axes; joints added), so every d/dq here is (..., nv, nv),
Pinocchio's convention for ``computeRNEADerivatives`` / ``computeABADerivatives``.
v and a are the body twist of the base (linear first, base axes) and its time
derivative, then the joint rates.

The derivatives of inverse and forward dynamics are computed on the robot as a
tree whose root joint is the base's free-flyer or planar joint (the algorithms
of :mod:`composedyn.dynamics.compiled.derivatives` and
:mod:`composedyn.dynamics.compiled.fd_derivatives` with the root's columns, as
Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` take a
``JointModelFreeFlyer`` or ``JointModelPlanar``; with external wrenches or dependent
mimic joints, those of inverse dynamics, with the wrenches' lever arms, at the forward
dynamics' accelerations: :meth:`composedyn.tree_dynamics.TreeDynamics.tree_derivatives`).
The derivation below, on the chart, serves the NumPy backend.

The dynamics is the fixed-base engine's on the chart (see
:mod:`composedyn.dynamics.floating.base`): with the virtual base joints at
zero, x = (0, joints), the engine's accelerations are

    ẍ = a - b(v) - (g_b, 0) on the base coordinates,   g_b = R₀ᵀ g,

    b(v) = Σₖ vₖ (Vₖ × Sₖ),  Vₖ = Σ_{j≤k} vⱼ Sⱼ   (free flyer: (u × w, (wy wz, -wx wz, wx wy))),

and tau = ID_chart(x, v, ẍ).  Hence, with M the mass matrix (the same in both):

* joint columns of dtau/dq: the chart's dtau/dx columns (ẍ does not depend on the joints);
* base columns: the whole robot moved rigidly changes only the direction of
  gravity in base axes: g_b(q ⊕ dq) = exp(dθ)ᵀ g_b = g_b + g_b × dθ, so
  dtau/dq_base = -M[:, base] G with G = d(g_b, 0)/d dq_base (free flyer:
  [g_b]× on the linear rows, angular columns; the position columns are zero);
* dtau/dv = dtau_chart/dẋ - M[:, base] db/dv;
* forward dynamics a = ẍ_chart(x, v, tau) + (b(v) + (g_b, 0)) on the base rows:
  da/dq = (chart's dẍ/dx on the joint columns, G on the base block),
  da/dv = chart's dẍ/dẋ + db/dv on the base block, da/dtau = M⁻¹
  (equal to -M⁻¹ dtau/dx at a = forward dynamics).

A planar base is the same with its three virtual joints (x, y, rotation about z).

Friction is the chart's joint friction (the base has none); Coulomb friction
as in :mod:`composedyn.derivatives` (its tanh form with ``smooth_friction``,
else derivative 0).  External wrenches (``f_ext``, link name -> (force,
moment) at the link's centre of mass, world axes) are held fixed in world axes:
the chart sees them in base axes, so moving the joints is the chart's own
derivative and turning the base turns them (:func:`_wrench_columns`); the
compiled path serves calls without them.

``linearize`` (the error-state flow of every joint, the base's included) is
:meth:`composedyn.tree_dynamics.TreeDynamics.linearize`.

References
----------
J. Carpentier, N. Mansard, "Analytical derivatives of rigid body dynamics
algorithms", Robotics: Science and Systems 2018 (derivatives with respect to
the tangent space of the configuration; forward from inverse dynamics, Sec. V).
J. Solà, J. Deray, D. Atchuthan, "A micro Lie theory for state estimation in
robotics", arXiv:1812.01537, 2018 (right perturbations q ⊕ δ and the adjoint
that moves them along the motion).
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, eq. (2.23)
(the motion cross product).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Mapping

import numpy as np

from composedyn.checks import smooth_width
from composedyn.dynamics import dispatch
from composedyn.dynamics.floating import base as chart

if TYPE_CHECKING:
    from composedyn.floating_robot import FloatingRobot


@functools.cache
def _products(kind: str) -> np.ndarray:
    """P (nvb, nvb, nvb): P[:, j, k] = coordinates of Sⱼ × Sₖ (motion cross product of the virtual axes)."""
    S = chart._axes(kind)
    base = chart.Base(kind, "", "", np.eye(4), np.zeros(3), S)
    return np.stack([np.stack([chart.coordinates(base, chart._cross(S[j], S[k])) for k in range(len(S))], -1)
                     for j in range(len(S))], 1)


def bias_jacobian(base: chart.Base, v: np.ndarray) -> np.ndarray:
    """db/dv_base (..., nvb, nvb) of the chain's velocity product b(v) = Σ_{j<k} vⱼ vₖ Sⱼ × Sₖ."""
    P = _products(base.kind)
    upper = np.triu(np.ones(P.shape[1:]), 1)  # j < k
    # d b / d v_m = Σ_{k>m} v_k P[:, m, k] + Σ_{j<m} v_j P[:, j, m]
    T = P * upper + np.swapaxes(P * upper, 1, 2)  # T[:, m, k]: coefficient of v_k in column m
    return np.einsum("imk,...k->...im", T, v[..., :base.nv])


def gravity_jacobian(base: chart.Base, R0: np.ndarray) -> np.ndarray:
    """G (..., nvb, nvb) = d (R₀ᵀ g in base coordinates) / d dq_base for q ⊕ dq: column k is
    the coordinates of (0, g_b × ωₖ) for a rotation axis ωₖ, zero for a translation."""
    g = np.einsum("...ji,j->...i", R0, base.gravity)
    cols = [chart.coordinates(base, np.concatenate([np.zeros(g.shape), np.cross(g, S[:3])], -1)) for S in base.axes]
    return np.stack(cols, -1)


_ND, _F64 = np.ndarray, np.dtype(np.float64)


def _compiled(robot: "FloatingRobot", forward: bool, q, v, x, friction: bool, smooth: float | None):
    """The compiled derivatives of plain float64 arrays (on the robot's tree,
    :mod:`composedyn.dynamics.compiled.derivatives`), or None: other input, the NumPy
    backend, dependent mimic joints or a sample the kernels refuse (wrong size, zero quaternion,
    singular M) take the general path, which raises the named error."""
    sm = smooth or 0.0
    name = f"{'forward' if forward else 'inverse'}_dynamics_derivatives"
    if (res := robot.data[name](q, v, x, sm, friction)) is not None:
        return res  # plain vectors: the C caller (composedyn.dynamics.data)
    plain = all(y.__class__ is _ND and y.dtype is _F64 for y in (q, v, x))
    if not plain or q.ndim == v.ndim == x.ndim == 1 or min(q.ndim, v.ndim, x.ndim) == 0:  # the general path
        return None  # (it names the shape that is wrong)
    try:
        np.broadcast_shapes(q.shape[:-1], v.shape[:-1], x.shape[:-1])
    except ValueError:
        return None
    if q.shape[-1] != robot.nq or v.shape[-1] != robot.nv or x.shape[-1] != robot.nv:
        return None
    data = robot.data
    if data.arrays is None or dispatch.reference(robot.model):
        return None
    return dispatch.call(name, robot.model, data.arrays, q, v, x, refuse=True,
                         friction=friction, smooth_friction=sm)


def _wrench_columns(robot: "FloatingRobot", x: np.ndarray, fc: dict) -> np.ndarray:
    """d(-Σ Jᵀ f)/d dq_base (..., nv, nvb) of the external wrenches fc (chart axes = base axes):
    turning the base by dθ turns them by exp(dθ)ᵀ in base axes, f + f × dθ for the force and
    the moment (about the centre of mass: the base position does not enter); the term is
    linear in f, so each column is the chart's inverse dynamics at rest under d f / d θₖ
    minus that under no wrench (the planar chart keeps its normal gravity)."""
    zero = np.zeros(x.shape)
    rest = robot.chart.inverse_dynamics(x, zero, zero, friction=False)
    cols = []
    for S in robot.base.axes:
        if not S[:3].any():
            cols.append(np.zeros(x.shape))
            continue
        df = {k: np.concatenate([np.cross(f[..., :3], S[:3]), np.cross(f[..., 3:], S[:3])], -1) for k, f in fc.items()}
        cols.append(robot.chart.inverse_dynamics(x, zero, zero, f_ext=df, friction=False) - rest)
    return np.stack(cols, -1)


def inverse_dynamics_derivatives(robot: "FloatingRobot", q, v, a, f_ext: Mapping | None = None,
                                 friction: bool = True, smooth_friction: float | None = None):
    """(dtau/dq, dtau/dv), each (..., nv, nv), of :meth:`FloatingRobot.inverse_dynamics`, q perturbed
    on the group (see the module docstring)."""
    smooth = None if smooth_friction is None else smooth_width(smooth_friction)
    if f_ext is None and (out := _compiled(robot, False, q, v, a, friction, smooth)) is not None:
        return out
    q, v, a = robot._state(q, v, a)
    base, nb = robot.base, robot.base.nv
    R0, _, x = robot._chart(q)
    xdd = chart.chart_acceleration(base, v, a, R0)
    fc = robot._wrenches(f_ext, R0)
    dq, dv = robot.chart.inverse_dynamics_derivatives(x, v, xdd, f_ext=fc, friction=friction, smooth_friction=smooth)
    Mb = robot.chart.mass_matrix(x)[..., :, :nb]
    head = -Mb @ gravity_jacobian(base, R0)
    if fc:
        head = head + _wrench_columns(robot, x, fc)
    dq = np.concatenate([head, dq[..., :, nb:]], -1)
    dv = np.array(dv, copy=True)
    dv[..., :, :nb] -= Mb @ bias_jacobian(base, v)
    return dq, dv


def forward_dynamics_derivatives(robot: "FloatingRobot", q, v, tau, f_ext: Mapping | None = None,
                                 friction: bool = True, smooth_friction: float | None = None):
    """(da/dq, da/dv, da/dtau = M⁻¹), each (..., nv, nv), of :meth:`FloatingRobot.forward_dynamics`,
    q perturbed on the group (see the module docstring)."""
    smooth = None if smooth_friction is None else smooth_width(smooth_friction)
    if f_ext is None and (out := _compiled(robot, True, q, v, tau, friction, smooth)) is not None:
        return out
    q, v, tau = robot._state(q, v, tau, names=("v", "tau"))
    base, nb = robot.base, robot.base.nv
    R0, _, x = robot._chart(q)
    fc = robot._wrenches(f_ext, R0)
    aq, av, Minv = robot.chart.forward_dynamics_derivatives(x, v, tau, f_ext=fc, friction=friction,
                                                            smooth_friction=smooth)
    head = np.zeros(aq.shape[:-1] + (nb,))
    if fc:
        head = -Minv @ _wrench_columns(robot, x, fc)
    aq = np.concatenate([head, aq[..., :, nb:]], -1)
    aq[..., :nb, :nb] += gravity_jacobian(base, R0)
    av = np.array(av, copy=True)
    av[..., :nb, :nb] += bias_jacobian(base, v)
    return aq, av, Minv

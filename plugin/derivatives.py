"""Derivatives and linearisation of a ``Robot``'s dynamics (the methods delegate here).

    d tau / d q, d tau / d qd       analytic, O(n * depth): composedyn.dynamics.reference.derivatives
    d qdd / d x = -M^-1 d tau / d x  at qdd = forward dynamics (x = q, qd);  d qdd / d tau = M^-1
    A = [[0, 1], [d qdd/d q, d qdd/d qd]],  B = [[0], [M^-1]]  for xdot = f(x, u), x = (q, qd), u = tau

Coulomb friction: with ``smooth_friction`` the derivatives are those of the
tanh model tau_c = friction * tanh(qd / smooth_friction) (the model
:meth:`Robot.forward_dynamics` and :func:`composedyn.simulate` integrate with
that option).  Without it, Coulomb friction is friction * sgn(qd), whose
derivative is 0 for qd != 0 and does not exist at qd = 0; 0 is returned there
too, so only the viscous damping appears in d tau / d qd.  The inverse
dynamics with ``smooth_friction`` is ``M qdd + h + damping qd +
friction tanh(qd / smooth_friction) - J^T f_ext``.

External wrenches (``f_ext``) are held fixed in world axes at the links'
centres of mass, which move with q: their contribution J(q)^T f depends on q
and its derivative is included.  With dependent mimic joints (q_all = G q + b)
every derivative is reduced as G^T (d tau_all / d x_all) G.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from composedyn.checks import joint_arrays, output_arrays, smooth_width, wrenches
from composedyn.dynamics.dispatch import deliver
from composedyn.dynamics.reference.derivatives import external_terms
from composedyn.dynamics.reference.kinematics import body_poses

if TYPE_CHECKING:
    from composedyn.robot import Robot

def inverse_dynamics_derivatives(robot: "Robot", q, qd, qdd, f_ext: Mapping | None = None,
                                 friction: bool = True, smooth_friction: float | None = None, out: tuple | None = None):
    """(d tau / d q, d tau / d qd), each (..., n, n), of :meth:`Robot.inverse_dynamics`, written into
    ``out`` (two arrays of that shape) when given.

    Entry [i, j] is d tau_i / d q_j (N m / rad, N / m ...).  See the module docstring.
    """
    smooth = None if smooth_friction is None else smooth_width(smooth_friction)
    if f_ext is None and (res := robot.data["inverse_dynamics_derivatives"](  # plain vectors: C
            q, qd, qdd, smooth or 0.0, friction)) is not None:
        return res if out is None else deliver(res, output_arrays(out, 2, res[0].shape, q, qd, qdd))
    q, qd, qdd = joint_arrays(robot.dof, q=q, qd=qd, qdd=qdd)
    if out is not None:
        out = output_arrays(out, 2, q.shape[:-1] + (robot.dof,) * 2, q, qd, qdd)
    m = robot.model
    qa, qda, qdda = robot.to_all_joints(q, qd, qdd)
    fx = wrenches(f_ext, m.link_names)
    fw = P = None
    if fx:
        fw, P = external_terms(m, *body_poses(m, qa), fx)
    if P is not None:
        P = P.reshape(P.shape[:-2] + (9,))
    direct = out if robot.mimic_map is None else None
    dq, dqd = robot.compute("inverse_dynamics_derivatives", qa, qda, qdda, f_world=fw, P=P, friction=friction,
                            smooth_friction=smooth, out=direct)
    if direct is not None:
        return out
    return deliver((robot.to_coordinates(dq, matrix=True), robot.to_coordinates(dqd, matrix=True)), out)


def forward_dynamics_derivatives(robot: "Robot", q, qd, tau, f_ext: Mapping | None = None,
                                 friction: bool = True, smooth_friction: float | None = None, out: tuple | None = None):
    """(d qdd / d q, d qdd / d qd, d qdd / d tau = M^-1), each (..., n, n), of
    :meth:`Robot.forward_dynamics`: -M^-1 d tau / d x at qdd = forward dynamics; written into ``out``
    (three arrays of that shape) when given.

    Differentiating the identity ID(q, qd, FD(q, qd, tau)) = tau gives
    d ID / d x + M d FD / d x = 0 (Carpentier & Mansard, RSS 2018, Sec. V).
    """
    smooth = None if smooth_friction is None else smooth_width(smooth_friction)
    if f_ext is None and (res := robot.data["forward_dynamics_derivatives"](
            q, qd, tau, smooth or 0.0, friction)) is not None:
        return res if out is None else deliver(res, output_arrays(out, 3, res[0].shape, q, qd, tau))
    q, qd, tau = (np.ascontiguousarray(x) for x in joint_arrays(robot.dof, q=q, qd=qd, tau=tau))  # own memory
    if out is not None:
        out = output_arrays(out, 3, q.shape[:-1] + (robot.dof,) * 2, q, qd, tau)
    if robot.mimic_map is None and f_ext is None:  # compiled kernels (or the NumPy reference)
        return robot.compute("forward_dynamics_derivatives", q, qd, tau, friction=friction, smooth_friction=smooth,
                             out=out)
    qdd = robot.forward_dynamics(q, qd, tau, f_ext=f_ext, friction=friction, smooth_friction=smooth_friction)
    dq, dqd = inverse_dynamics_derivatives(robot, q, qd, qdd, f_ext=f_ext, friction=friction,
                                           smooth_friction=smooth_friction)
    return deliver(forward_from_inverse(dq, dqd, robot.mass_matrix(q)), out)


def forward_from_inverse(dq: np.ndarray, dqd: np.ndarray, M: np.ndarray):
    """(-M^-1 dq, -M^-1 dqd, M^-1), each (..., n, n): the forward-dynamics derivatives from those of
    inverse dynamics taken at the forward dynamics' accelerations and the mass matrix M (..., n, n)
    (its inverse symmetrised)."""
    Minv = np.linalg.inv(M)
    Minv = 0.5 * (Minv + np.swapaxes(Minv, -1, -2))
    return -Minv @ dq, -Minv @ dqd, np.broadcast_to(Minv, dq.shape).copy()


def linearize(robot: "Robot", q, qd, tau, dt: float | None = None, f_ext: Mapping | None = None,
              friction: bool = True, smooth_friction: float | None = None):
    """(A, B), (..., 2n, 2n) and (..., 2n, n): the linearisation of xdot = f(x, u) at (x, u).

    x = (q, qd), u = tau; A = df/dx = [[0, 1], [d qdd/d q, d qdd/d qd]],
    B = df/du = [[0], [M^-1]].  With ``dt`` (s), the exact zero-order-hold
    discretisation of that linear system: u held constant over each step,

        expm([[A, B], [0, 0]] dt) = [[A_d, B_d], [0, 1]],   dx_{k+1} = A_d dx_k + B_d du_k,

    (A_d = e^{A dt}, B_d = int_0^dt e^{A s} ds B), computed with
    :func:`scipy.linalg.expm` of the augmented matrix (Van Loan, "Computing
    integrals involving the matrix exponential", IEEE TAC 23(3), 1978).  It
    is the Jacobian of the dt-flow of the nonlinear dynamics at an
    equilibrium (f(x, u) = 0), and agrees with it to O(dt^2) elsewhere.
    """
    dqdd_dq, dqdd_dqd, Minv = forward_dynamics_derivatives(robot, q, qd, tau, f_ext=f_ext, friction=friction,
                                                           smooth_friction=smooth_friction)
    n = robot.dof
    batch = Minv.shape[:-2]
    A = np.zeros(batch + (2 * n, 2 * n))
    A[..., :n, n:] = np.eye(n)
    A[..., n:, :n], A[..., n:, n:] = dqdd_dq, dqdd_dqd
    B = np.zeros(batch + (2 * n, n))
    B[..., n:, :] = Minv
    return (A, B) if dt is None else discretize(A, B, dt)


def discretize(A: np.ndarray, B: np.ndarray, dt) -> tuple[np.ndarray, np.ndarray]:
    """(A_d, B_d) (..., m, m), (..., m, k): the exact zero-order-hold discretisation of
    xdot = A x + B u over ``dt`` seconds, expm([[A, B], [0, 0]] dt) = [[A_d, B_d], [0, 1]]
    (Van Loan, IEEE TAC 23(3), 1978)."""
    try:
        step = float(dt)
    except (TypeError, ValueError):
        step = float("nan")
    if not (step > 0 and np.isfinite(step)):
        raise ValueError(f"dt must be a positive time step in seconds, got {dt!r}")
    dt = step
    from scipy.linalg import expm  # imported here: keeps `import composedyn` light

    m, k = B.shape[-2:]
    aug = np.zeros(B.shape[:-2] + (m + k, m + k))
    aug[..., :m, :m], aug[..., :m, m:] = A * dt, B * dt
    E = expm(aug)
    return E[..., :m, :m].copy(), E[..., :m, m:].copy()

"""Forward dynamics: the articulated-body algorithm (default) and CRBA + Cholesky.

:func:`forward_dynamics` runs the ABA (:mod:`composedyn.dynamics.reference.aba`);
:func:`solve_mass` solves M qdd = tau - h by Cholesky, for callers that have M
already (mimic-reduced models, the compiled backend).  The ABA is the NumPy
default: it does O(n) 6x6 work per sample, where the CRBA does O(n * depth)
6x6 products plus an O(n^3) Cholesky and needs a separate RNEA for h; it was
faster at every size measured (``bench/dynamics.py``, docs/performance.md).
The compiled backend (:mod:`composedyn.dynamics.dispatch`) has its own ABA kernel.
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.model import Model
from composedyn.dynamics.pivots import low_pivots, singular_at
from composedyn.dynamics.reference.aba import aba
from composedyn.dynamics.reference.friction import friction_torques


def forward_dynamics(model: Model, q, qd, tau, f_world=None, friction: bool = True,
                     smooth: float | None = None) -> np.ndarray:
    """Joint accelerations qdd (..., n) of all joints of ``model`` by the ABA.

    Solves M qdd = tau - C qd - g - tau_friction + J^T f_ext with M including
    the armature.  ``f_world`` (..., n, 6) as in :func:`composedyn.dynamics.reference.rnea.rnea`;
    ``friction``/``smooth`` as in :func:`composedyn.dynamics.reference.friction.friction_torques`.
    """
    if friction:
        tau = np.asarray(tau, dtype=float) - friction_torques(model, qd, smooth=smooth)
    return aba(model, q, qd, tau, f_world=f_world)


def solve_mass(model: Model, M: np.ndarray, rhs: np.ndarray, floors: np.ndarray | None = None) -> np.ndarray:
    """Solve M x = rhs for batched symmetric positive-definite M (..., n, n).

    Raises ModelError naming the joints with (near) zero inertia when M is
    singular (e.g. massless links at the end of a chain).  With ``floors`` (n,)
    (:func:`composedyn.dynamics.pivots.model_pivot_floors`), M is factorised from
    its last coordinate to the first, as the compiled kernels do, and a pivot at
    or below its coordinate's floor is singular too (round-off, not inertia).
    """
    order = slice(None, None, -1) if floors is not None else slice(None)
    if floors is not None:
        low = np.nonzero(low_pivots(M, floors).reshape(-1, model.n).any(axis=0))[0]
        if low.size:
            raise ModelError(f"{model.source}: cannot solve forward dynamics, "
                             f"{singular_at([model.joint_names[j] for j in low])}")
    try:
        L = np.linalg.cholesky(M[..., order, order])
    except np.linalg.LinAlgError:
        diag = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, model.n)
        scale = max(1.0, float(np.abs(diag).max()) if diag.size else 1.0)
        bad = sorted({model.joint_names[j] for j in np.nonzero(diag <= 1e-12 * scale)[1]})
        hint = (f"joints {bad} move no mass or inertia (links without <inertial>?); give the links they move "
                "mass and inertia, or add armature" if bad else "it is not positive definite")
        raise ModelError(f"{model.source}: cannot solve forward dynamics, "
                         f"the mass matrix is singular: {hint}") from None
    y = np.linalg.solve(L, rhs[..., order, None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., order, 0]


"""Forward dynamics by CRBA + Cholesky: qdd = M(q)^-1 (tau - h).

Chosen over the ABA because in vectorised NumPy the batched CRBA and one
batched Cholesky solve beat a recursion with n small dense solves per sample
at n <= 30 (measured in bench/dynamics.py).
"""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.model import Model
from composedyn.errors import ModelError


def solve_mass(model: Model, M: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Solve M x = rhs for batched symmetric positive-definite M (..., n, n).

    Raises ModelError naming the joints with (near) zero inertia when M is
    singular (e.g. massless links at the end of a chain).
    """
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        diag = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, model.n)
        scale = max(1.0, float(np.abs(diag).max()) if diag.size else 1.0)
        bad = sorted({model.joint_names[j] for j in np.nonzero(diag <= 1e-12 * scale)[1]})
        hint = (f"joints {bad} move no mass or inertia (links without <inertial>?); give the links they move "
                "mass and inertia, or add armature" if bad else "it is not positive definite")
        raise ModelError(f"{model.source}: cannot solve forward dynamics, the mass matrix is singular: {hint}") from None
    y = np.linalg.solve(L, rhs[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]

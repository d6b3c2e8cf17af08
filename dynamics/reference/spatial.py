"""Spatial (6-D) vector algebra, batched.

Convention, stated once for the whole package: spatial vectors put the
**angular part first**.  A motion vector is ``(omega, v)`` and a force vector
is ``(n, f)`` (Featherstone, *Rigid Body Dynamics Algorithms*, 2008).  All
recursive algorithms work in **world coordinates**: ``v`` is the velocity of
the body-fixed point that coincides with the world origin and ``n`` is the
moment about the world origin.  Every function accepts leading batch axes.
"""

from __future__ import annotations

import numpy as np

_EYE = np.eye(3)
_EYE.flags.writeable = False


def skew(w: np.ndarray) -> np.ndarray:
    """Cross-product matrix: ``skew(w) @ x == cross(w, x)``; (..., 3) -> (..., 3, 3)."""
    w = np.asarray(w, dtype=float)
    out = np.zeros(w.shape + (3,))
    out[..., 0, 1], out[..., 0, 2] = -w[..., 2], w[..., 1]
    out[..., 1, 0], out[..., 1, 2] = w[..., 2], -w[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -w[..., 1], w[..., 0]
    return out


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b over the last axis, broadcast (NumPy's ``cross`` costs several times more on small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def rotation_about(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues rotation by ``angle`` (...,) about unit ``axis`` (..., 3) -> (..., 3, 3)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)[..., None, None]
    K = skew(axis)
    return _EYE + np.sin(angle) * K + (1.0 - np.cos(angle)) * (K @ K)  # the identity broadcasts


def crm_apply(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Motion cross product ``v x m`` of motion vectors (..., 6)."""
    w, u = v[..., :3], v[..., 3:]
    return np.concatenate(
        [np.cross(w, m[..., :3]), np.cross(w, m[..., 3:]) + np.cross(u, m[..., :3])], axis=-1
    )


def crf_apply(v: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Force cross product ``v x* f`` of a motion vector and a force vector (..., 6)."""
    w, u = v[..., :3], v[..., 3:]
    return np.concatenate(
        [np.cross(w, f[..., :3]) + np.cross(u, f[..., 3:]), np.cross(w, f[..., 3:])], axis=-1
    )


def crm(v: np.ndarray) -> np.ndarray:
    """Matrix of ``v x`` acting on motion vectors: (..., 6) -> (..., 6, 6)."""
    W, U = skew(v[..., :3]), skew(v[..., 3:])
    out = np.zeros(v.shape[:-1] + (6, 6))
    out[..., :3, :3] = W
    out[..., 3:, :3] = U
    out[..., 3:, 3:] = W
    return out


def crf(v: np.ndarray) -> np.ndarray:
    """Matrix of ``v x*`` acting on force vectors, ``crf(v) = -crm(v).T``."""
    return -np.swapaxes(crm(v), -1, -2)


def crf_bar(f: np.ndarray) -> np.ndarray:
    """Skew matrix ``A(f)`` with ``A(f) @ v == v x* f`` (used by the Coriolis matrix)."""
    N, F = skew(f[..., :3]), skew(f[..., 3:])
    out = np.zeros(f.shape[:-1] + (6, 6))
    out[..., :3, :3] = -N
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    return out


def spatial_inertia(mass: np.ndarray, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """6x6 spatial inertia about the frame origin, angular first.

    ``mass`` (...,) kg, ``com`` (..., 3) in the same frame, ``inertia_com``
    (..., 3, 3) about the centre of mass in that frame's axes.
    """
    mass = np.asarray(mass, dtype=float)[..., None, None]
    C = skew(com)
    out = np.zeros(np.broadcast_shapes(mass.shape, C.shape, np.shape(inertia_com))[:-2] + (6, 6))
    out[..., :3, :3] = inertia_com + mass * (C @ np.swapaxes(C, -1, -2))
    out[..., :3, 3:] = mass * C
    out[..., 3:, :3] = mass * np.swapaxes(C, -1, -2)
    out[..., 3:, 3:] = mass * np.eye(3)
    return out

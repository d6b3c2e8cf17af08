"""Link wrenches as the spatial forces the compiled kernels take.

A wrench on a link is ``(fx, fy, fz, tx, ty, tz)`` in world axes, the force applied at the
link's centre of mass (the ``f_ext`` of the ``Robot`` methods).  The kernels take, per body,
the spatial force it adds with its moment about the world origin first, ``(t + c x f, f)``,
c the centre of mass in the world: :func:`body_forces` computes c from the robot's
compiled frame pose of that link (one kernel call per loaded link), so a controller's
one-sample call does not pay for the poses of every body.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from composedyn.dynamics.reference.spatial import cross


def body_forces(pose: Callable, q: np.ndarray, f: Mapping[str, np.ndarray], body_of: Mapping[str, int],
                com_of: Mapping[str, np.ndarray], n: int, lever_arms: bool = False):
    """Checked link wrenches ``f`` (link -> (..., 6), world axes, at the link's centre of mass) as the
    spatial forces (..., n, 6) on the n bodies: moment about the world origin (N m), then force (N).

    ``pose(q, link)``: the world <- link transform (..., 4, 4) at q (..., nq); ``body_of[link]``: the
    link's body (< 0: welded to the world, which takes the wrench); ``com_of[link]`` (3,): its centre
    of mass in link axes (m).  ``lever_arms``: (forces, P) with P (..., n, 9) the derivative kernels'
    lever-arm matrices (row-major): per body the sum over its wrenches of (c . F) 1 - c F^T.  A
    wrench's leading axes must broadcast to q's (ValueError naming the link otherwise).
    """
    batch = q.shape[:-1]
    for link, w in f.items():
        try:
            ok = w.ndim == 1 or np.broadcast_shapes(w.shape[:-1], batch) == batch
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"f_ext[{link!r}] has shape {w.shape}, expected (..., 6) with leading axes "
                             f"broadcasting to the joint arrays' batch shape {batch}")
    out = np.zeros(batch + (n, 6))
    P = np.zeros(batch + (n, 3, 3)) if lever_arms else None
    for link, w in f.items():
        b = body_of[link]
        if b < 0:
            continue
        T = pose(q, link)
        if batch:
            c = T[..., :3, 3] + T[..., :3, :3] @ com_of[link]
            force = w[..., :3]
            out[..., b, :3] += w[..., 3:] + cross(c, force)
            out[..., b, 3:] += force
            if lever_arms:
                P[..., b, :, :] += (np.sum(c * force, -1)[..., None, None] * np.eye(3)
                                    - c[..., :, None] * force[..., None, :])
            continue
        row, (c0, c1, c2) = _force_row(T, com_of[link], w)  # one sample: plain floats
        out[b] += row
        if lever_arms:
            f0, f1, f2 = row[3:]
            d = c0 * f0 + c1 * f1 + c2 * f2
            P[b] += ((d - c0 * f0, -c0 * f1, -c0 * f2), (-c1 * f0, d - c1 * f1, -c1 * f2),
                     (-c2 * f0, -c2 * f1, d - c2 * f2))
    return out if P is None else (out, P.reshape(batch + (n, 9)))


def _force_row(T: np.ndarray, com: np.ndarray, w: np.ndarray) -> tuple:
    """(the body force (t + c x f, f) of wrench ``w`` (6,) at the centre of mass ``com`` (3,) of a link
    at world pose ``T`` (4, 4), c (3,) that point in the world), in plain floats."""
    (r0, r1, r2, _), (c0, c1, c2) = T.tolist(), com.tolist()
    c0, c1, c2 = (r[3] + r[0] * c0 + r[1] * c1 + r[2] * c2 for r in (r0, r1, r2))
    f0, f1, f2, t0, t1, t2 = w.tolist()
    return (t0 + (c1 * f2 - c2 * f1), t1 + (c2 * f0 - c0 * f2), t2 + (c0 * f1 - c1 * f0), f0, f1, f2), (c0, c1, c2)


def one_sample(data, name: str, q, rates: tuple, f: Mapping[str, np.ndarray], frame_of: Mapping[str, int],
               body_of: Mapping[str, int], com_of: Mapping[str, np.ndarray], n: int, options: tuple,
               out: np.ndarray | None = None):
    """Quantity ``name`` (inverse or forward dynamics) at one sample with checked link wrenches ``f``,
    through C callers only: each loaded link's pose (``data["frame_pose"]``, frame index
    ``frame_of[link]``), then the quantity's caller that takes the body forces
    (:data:`composedyn.dynamics.data.WITH_EXTRAS`) with ``options`` (its number and integer options, as
    the caller takes them).  None when any caller declines (q or a rate not a float64 vector of its
    length, NaN, a refused sample, the NumPy backend...) or a wrench has batch axes: the method's
    general path then converts, checks and names the error."""
    from composedyn.dynamics.data import WITH_EXTRAS

    if q.__class__ is not np.ndarray or q.ndim != 1:
        return None
    fw = np.zeros(6 * n)
    pose = data["frame_pose"]
    for link, w in f.items():
        b = body_of[link]
        if w.ndim != 1:
            return None
        if b >= 0:
            T = pose(q, frame_of[link])
            if T is None:
                return None
            fw[6 * b:6 * b + 6] += _force_row(T, com_of[link], w)[0]
    call = data[name + WITH_EXTRAS]
    return call(q, *rates, fw, *options) if out is None else call(q, *rates, fw, *options, out=out)

"""Mimic joints as dependent coordinates (Kolev's modified Lagrange equations).

A URDF ``<mimic joint="s" multiplier="k" offset="o"/>`` on joint ``r`` is the
holonomic constraint ``q_r = k q_s + o``.  Collecting all of them,

    q_full = G q_ind + b,        G = d q_full / d q_ind  (n_all, n_ind), constant,

and Kolev's equation (2.20) with Q_r = 0 on the dependent joints (the coupling,
not a motor, drives them) becomes the projection

    tau_ind = G^T tau_full(q_full, G qd, G qdd),
    M_red = G^T M G,   C_red = G^T C G,   g_red = G^T g,

(armature and friction of dependent joints are projected the same way, since
they are part of tau_full).  ``tau_full`` at a dependent joint is the torque
(or force) that the coupling must transmit to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from composedyn.dynamics.errors import ModelError
from composedyn.dynamics.model import Model


@dataclass(frozen=True, eq=False)
class MimicMap:
    """Linear map from independent to all joint coordinates, ``q_full = G q_ind + b``.

    Attributes: ``independent`` (k,) and ``dependent`` (n - k,) joint indices in
    model order; ``G`` (n, k); ``b`` (n,) (rad or m); ``names`` (k,) and
    ``dependent_names`` (n - k,) joint names.
    """

    independent: np.ndarray
    dependent: np.ndarray
    G: np.ndarray
    b: np.ndarray
    names: tuple
    dependent_names: tuple

    def full(self, x: np.ndarray, offset: bool = True) -> np.ndarray:
        """(..., k) -> (..., n): positions (``offset=True``) or velocities/accelerations."""
        out = np.einsum("ij,...j->...i", self.G, x)
        return out + self.b if offset else out

    def reduce(self, tau: np.ndarray) -> np.ndarray:
        """Generalised forces (..., n) -> (..., k): G^T tau."""
        return np.einsum("ij,...i->...j", self.G, tau)

    def reduce_matrix(self, A: np.ndarray) -> np.ndarray:
        """(..., n, n) -> (..., k, k): G^T A G."""
        return np.einsum("ia,...ij,jb->...ab", self.G, A, self.G)

    def solve_view(self, model: Model) -> SimpleNamespace:
        """What ``solve_mass`` needs to name joints in its errors, for the reduced matrix."""
        return SimpleNamespace(n=len(self.names), joint_names=self.names, source=model.source)


def mimic_map(model: Model) -> MimicMap:
    """Resolve the mimic relations of ``model`` (chains allowed) into a :class:`MimicMap`.

    A chain r -> s -> t (r mimics s which mimics t) composes to
    ``q_r = k_r k_s q_t + k_r o_s + o_r``.  Raises ModelError naming the joints
    of a cycle of mimics.
    """
    n, src = model.n, model.mimic_source
    names = model.joint_names
    # root[i], mult[i], off[i]: q_i = mult * q_root + off with root independent
    root = np.arange(n)
    mult, off = np.ones(n), np.zeros(n)
    for i in range(n):
        seen, j, k, o = [i], i, 1.0, 0.0
        while src[j] >= 0:
            k, o = k * model.mimic_multiplier[j], k * model.mimic_offset[j] + o
            j = int(src[j])
            if j in seen:
                cycle = " -> ".join(names[s] for s in seen + [j])
                raise ModelError(f"{model.source}: mimic joints form a cycle: {cycle}")
            seen.append(j)
        root[i], mult[i], off[i] = j, k, o
    ind = np.array([i for i in range(n) if src[i] < 0], dtype=int)
    dep = np.array([i for i in range(n) if src[i] >= 0], dtype=int)
    col = {int(j): c for c, j in enumerate(ind)}
    G = np.zeros((n, len(ind)))
    G[np.arange(n), [col[int(r)] for r in root]] = mult
    return MimicMap(
        independent=ind,
        dependent=dep,
        G=G,
        b=off,
        names=tuple(names[i] for i in ind),
        dependent_names=tuple(names[i] for i in dep),
    )


MIMIC_MODES = ("dependent", "independent")


def select_mimic(model: Model, mode: str) -> MimicMap | None:
    """The :class:`MimicMap` of ``model`` for ``mode``, or None when coordinates stay independent.

    ``mode="dependent"`` (default of :class:`composedyn.Robot`): mimic joints are
    dependent coordinates; ``"independent"``: ``<mimic>`` is ignored and every
    joint is a coordinate of its own.  None is also returned when the model has
    no mimic joint, so robots without mimic joints take the unchanged path.
    """
    if mode not in MIMIC_MODES:
        raise ValueError(f"mimic must be one of {MIMIC_MODES}, got {mode!r}")
    if mode == "independent" or not np.any(model.mimic_source >= 0):
        return None
    return mimic_map(model)

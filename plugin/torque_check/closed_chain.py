"""The torque check of a closed chain: :func:`composedyn.check_trajectory` over the actuated joints,
after the whole path has been closed."""

from __future__ import annotations

import numpy as np

from composedyn.closed_chain import ClosedChain
from composedyn.errors import ModelError
from composedyn.sampled import check_times
from composedyn.torque_check.trajectory import check_trajectory


def check_closed_trajectory(chain: ClosedChain, t, q, qd=None, qdd=None, smoothing: float | str = 0.0,
                            friction: bool = True, source: str = "<array>", limits=None):
    """:func:`composedyn.check_trajectory` for a closed chain's actuated joints q (T, k).

    The whole path is closed first (continuation from sample to sample), so a
    path that leaves the assembly range gives one ValueError naming the first
    sample (index and time) where the loops cannot close.
    """
    t = check_times(t)
    qa = np.asarray(q, dtype=float)
    if qa.ndim != 2 or qa.shape != (len(t), chain.dof):
        raise ValueError(f"{source}: q must have shape ({len(t)}, {chain.dof}) (actuated joints "
                         f"{list(chain.joint_names)}), got {qa.shape}")
    start = chain.assembly
    try:
        for s in range(len(t)):
            chain.assemble(qa[s])
    except ModelError as e:
        raise ValueError(f"{source}: sample {s} (t = {t[s]:g} s): {str(e).split(': ', 1)[-1]}") from None
    finally:
        chain.assembly = start
    return check_trajectory(chain, t, qa, qd, qdd, smoothing=smoothing, friction=friction, source=source,
                            limits=limits)

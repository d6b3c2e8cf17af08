"""The ``mujoco`` package (the ``[mjcf]`` extra), imported on first use by the MJCF reader."""

from __future__ import annotations

from composedyn.dynamics.errors import ModelError


def import_mujoco():
    """The ``mujoco`` module, or ModelError saying which extra to install."""
    try:
        import mujoco
    except ImportError:
        raise ModelError('reading MJCF needs MuJoCo: pip install "composedyn[mjcf]"') from None
    return mujoco

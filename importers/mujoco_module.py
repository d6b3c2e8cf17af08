"""The ``mujoco`` package (the ``[mjcf]`` extra), imported on first use by the MJCF reader."""

from __future__ import annotations

from composedyn.dynamics.extras import require


def import_mujoco():
    """The ``mujoco`` module, or :class:`~composedyn.MissingExtra` naming the ``[mjcf]`` extra."""
    return require("mujoco", "reading MJCF")

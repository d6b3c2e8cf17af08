"""Optional dependencies: which extra of composedyn installs each, and importing one on demand.

The core install is what the dynamics need (numpy, scipy, networkx, lxml,
numba).  Every other third-party package is imported through :func:`require`,
at the first use of the feature that needs it, never at ``import composedyn``;
when it is missing, :class:`~composedyn.dynamics.errors.MissingExtra` says in
one line which extra to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from composedyn.dynamics.errors import MissingExtra

# top-level module -> the extra of composedyn that installs it
EXTRAS = {
    "matplotlib": "plot",
    "rosbags": "logs",
    "dask": "fleet",
    "distributed": "fleet",
    "cvxpy": "identify",
    "clarabel": "identify",
    "xacro": "xacro",
    "sympy": "symbolic",
    "mujoco": "mjcf",
}


def install_hint(module: str, extra: str | None = None) -> str:
    """``pip install "composedyn[<extra>]"`` for the (top-level) ``module``, or for ``extra``."""
    return f'pip install "composedyn[{extra or EXTRAS[module.split(".")[0]]}]"'


def require(module: str, feature: str, extra: str | None = None) -> ModuleType:
    """Import and return ``module`` (e.g. ``"rosbags.highlevel"``), needed by ``feature``
    (words for the message, e.g. ``"reading ROS bags"``); ``extra``: the extra to name,
    when not the one :data:`EXTRAS` gives for the package.

    Raises :class:`MissingExtra` with one line naming the feature, the package and the
    extra to install when the package is not installed or does not import.
    """
    top = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = exc.name in (top, module) or exc.name is None and "No module named" in str(exc)
        why = "is not installed" if missing else f"does not import ({str(exc).splitlines()[0] if str(exc) else exc})"
        raise MissingExtra(f"{feature} needs {top}, which {why}: {install_hint(top, extra)}", name=top) from None

"""The exceptions of composedyn, importable as ``composedyn.errors`` (defined in
:mod:`composedyn.dynamics.errors`, the lowest layer, so that importers and the
dynamics raise them without importing the package facade)."""

from composedyn.dynamics.errors import MissingExtra, ModelError, ModelWarning, SimulationError

__all__ = ["MissingExtra", "ModelError", "ModelWarning", "SimulationError"]

"""Exceptions raised by composedyn.

``ModelError`` is raised for bad robot descriptions (files, graphs, DH tables);
its message always names the source (file or "<graph>") and the element
(link, joint, row) that is wrong.  Bad numeric arrays raise ``ValueError``.
``SimulationError`` is raised when a time integration fails.
"""

from __future__ import annotations


class ModelError(ValueError):
    """A robot description is invalid or unsupported.

    Subclasses ``ValueError`` so generic input handling still catches it.
    """


class SimulationError(RuntimeError):
    """A time integration failed (e.g. the step size fell below the spacing of
    floating-point numbers); the message names the time reached."""


class ModelWarning(UserWarning):
    """A robot description loads, but something in it looks suspicious
    (e.g. an inertia violating the triangle inequality)."""


class MissingExtra(ImportError):
    """A feature needs an optional dependency that is not installed; the one-line message
    names the feature, the package and the extra that installs it
    (``pip install "composedyn[logs]"``).  Subclasses ``ImportError``."""

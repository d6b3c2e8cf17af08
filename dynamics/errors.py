"""Exceptions raised by composedyn.

``ModelError`` is raised for bad robot descriptions (files, graphs, DH tables);
its message always names the source (file or "<graph>") and the element
(link, joint, row) that is wrong.  Bad numeric arrays raise ``ValueError``.
"""

from __future__ import annotations


class ModelError(ValueError):
    """A robot description is invalid or unsupported.

    Subclasses ``ValueError`` so generic input handling still catches it.
    """


class ModelWarning(UserWarning):
    """A robot description loads, but something in it looks suspicious
    (e.g. an inertia violating the triangle inequality)."""

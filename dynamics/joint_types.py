"""Codes of the joint types in a compiled :class:`~composedyn.dynamics.model.Model` (``Model.jtype``)."""

REVOLUTE, PRISMATIC = 0, 1  # a continuous joint is REVOLUTE without position limits

"""Importers: robot descriptions -> kinematic graph (networkx.DiGraph).

Nothing else in composedyn parses files.  Each importer returns a graph that
follows the schema in :mod:`composedyn.dynamics.schema`.
"""

"""Dependent coordinates: mimic joints and loop closures (closed kinematic chains).

``mimic``: linear couplings q_full = G q_ind + b from URDF ``<mimic>``.
``loops``: loop-closure constraints phi(q) = 0 between two link frames, their
Jacobian and acceleration bias.  ``reduced``: position/velocity/acceleration
closure and the projection of the tree's dynamics onto independent coordinates
(Kolev, "Modified equations of Lagrange of II order").
"""

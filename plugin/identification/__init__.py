"""Identification of the inertial parameters from joint logs, and excitation trajectories."""

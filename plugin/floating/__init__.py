"""Floating-base robots beyond the facade: state conventions, contact wrenches, legged torque checks."""

"""Floating bases: the base's description and its place at the root of the tree, and its Lie-group operations."""

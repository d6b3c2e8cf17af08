"""Floating bases: Lie-group operations and the chart that maps them onto the fixed-base engine."""

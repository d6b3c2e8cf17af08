"""What the JAX tests share: JAX with float64 enabled (skipped as a module when the [jax] extra is
missing; the test extra installs it), the cases each kind of test runs on, and the states as JAX arrays."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax", reason="the [jax] extra is part of the test extra")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402, F401  (for the tests, after the skip above)

# Each case compiles its own XLA programs (seconds each): float32 values and the Jacobians run on the cases
# that take different code paths (a bundled chain, mimic joints, branched trees, floating bases); float64
# values run on every case.
FLOAT32_CASES = ("panda", "mimic", "floating_mimic")
GRADIENT_CASES = ("tree", "mimic", "floating", "floating_mimic")


def args_of(st: dict, names: tuple, dtype=jnp.float64) -> list:
    """The arrays ``names`` of the states ``st`` as JAX arrays of ``dtype``."""
    return [jnp.asarray(st[a], dtype=dtype) for a in names]

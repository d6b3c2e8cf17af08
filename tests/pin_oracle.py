"""Pinocchio as the tests' oracle: see :mod:`composedyn.testing.pinocchio_oracle`.

A missing oracle is an error (``tests/conftest.py`` stops the test run) unless
``COMPOSEDYN_NO_ORACLE=1`` is set; then the tests that import this module are
skipped, and the summary of the run counts them.  ``pin`` is the ``pinocchio``
module behind a counter of attribute look-ups (also used by ``PinPair``), so
that the summary says how many tests compared against Pinocchio.
"""

import os

NO_ORACLE = "COMPOSEDYN_NO_ORACLE"

try:
    from composedyn.testing import pinocchio_oracle as _oracle
except ImportError:
    if os.environ.get(NO_ORACLE) != "1":
        raise
    import pytest

    pytest.skip(f"Pinocchio missing and {NO_ORACLE}=1", allow_module_level=True)

from composedyn.testing.pinocchio_oracle import (  # noqa: E402, F401
    ERD_URDFS,
    FreeFlyerPair,
    PinPair,
    erd_robots_dir,
    erd_urdf,
    loop_constraints,
    rel_err,
)


class _Counted:
    """A module whose attribute look-ups (one per call into it) are counted in ``uses``."""

    def __init__(self, module):
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "uses", 0)

    def __getattr__(self, name: str):
        object.__setattr__(self, "uses", self.uses + 1)
        return getattr(self._module, name)


pin = _oracle.pin if isinstance(_oracle.pin, _Counted) else _Counted(_oracle.pin)
_oracle.pin = pin  # PinPair's model building counts too

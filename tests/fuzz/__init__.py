"""The standing robustness suite: a fuzzer over the public methods of ``Robot``,
``FloatingRobot`` and ``robot.fast`` (run in a worker subprocess so that a segfault or a
hang is caught and counted), and a corpus of malformed descriptions.

Every call is classified as a *clear error* (ValueError/ModelError/TypeError with a short
message), a *result* verified against an independent computation (clean float64 copies of
the same inputs through the plain method; ``robot.fast`` against the ``Robot`` method; a
floating base's quaternion normalised), a *crash*, a *wrong answer* or a *hang*.
"""

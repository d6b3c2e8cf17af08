"""The compiled kernels called one sample at a time with their own scratch, and the batch loops
generated from their declarations (:mod:`composedyn.dynamics.compiled.declare`), for the kernel
tests: ``<name>_one`` runs the kernel's ``<name>_into`` on fresh scratch; ``<NAME>`` is the pair
(serial, parallel) of its declared quantity's loops, taking the arrays the loops of earlier
releases took (no status array where the quantity never refuses a sample)."""

from __future__ import annotations

import numpy as np

from composedyn.dynamics.compiled import aba, coriolis, crba, declare, gravity, rnea


def rnea_one(im, fm, q, qd, qdd, fw, grav, extra, out):
    rnea.rnea_into(im, fm, q, qd, qdd, fw, grav, extra, out, np.empty((q.shape[0] + 1, rnea.SCRATCH)))


def crba_one(im, fm, q, arm, out):
    crba.crba_into(im, fm, q, arm, out, np.empty((q.shape[0], crba.SCRATCH)))


def gravity_one(im, fm, q, out):
    gravity.gravity_into(im, fm, q, out, np.empty((q.shape[0], gravity.SCRATCH)))


def coriolis_one(im, fm, q, qd, out):
    coriolis.coriolis_into(im, fm, q, qd, out, np.empty((q.shape[0], coriolis.SCRATCH)))


def aba_one(im, fm, q, qd, tau, fw, fric, smooth, out) -> int:
    return aba.aba_into(im, fm, q, qd, tau, fw, fric, smooth, out, np.empty((q.shape[0] + 1, aba.SCRATCH)))


def _pair(quantity, adapt):
    def made(loop):
        def run(*args):
            inputs, out = adapt(*args)
            loop(*inputs, out, np.empty(out.shape[0], dtype=np.int64))
        return run
    return tuple(made(loop) for loop in declare.loops(quantity))


def _rnea(im, fm, Q, QD, QDD, FW, grav, extra, OUT):
    assert grav == 1 and extra & 1, "the declared inverse dynamics has gravity and armature"
    return (im, fm, Q, QD, QDD, FW, (extra >> 1) & 1), OUT


def _crba(im, fm, Q, arm, OUT):
    assert arm == 1, "the declared mass matrix has the armature"
    return (im, fm, Q), OUT


RNEA = _pair(rnea.INVERSE_DYNAMICS, _rnea)
CRBA = _pair(crba.MASS_MATRIX, _crba)
GRAVITY = _pair(gravity.GRAVITY_TORQUES, lambda im, fm, Q, OUT: ((im, fm, Q), OUT))
CORIOLIS = _pair(coriolis.CORIOLIS_MATRIX, lambda im, fm, Q, QD, OUT: ((im, fm, Q, QD), OUT))
ABA = declare.loops(aba.FORWARD_DYNAMICS)  # (im, fm, Q, QD, TAU, FW, friction, smooth, OUT, STATUS): 3 singular

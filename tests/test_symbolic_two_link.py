"""The two-link example of Giacaglia & Lamas (section 3) in absolute angles.

Reference: an independent hand Lagrangian in SymPy, written from the paper's
positions (3.1)-(3.2): T = sum(m_i |dC_i/dt|^2 / 2 + I_i th_i'^2 / 2),
V = sum(m_i g y_i), generalised forces of the link torques N1 e3, N2 e3 from
their virtual work N1 d(th1) + N2 d(th2).
"""

import sympy as sp

from composedyn.dynamics.symbolic import equations
from composedyn.dynamics.symbolic.examples import paper_two_link


def _derive(joint_motor=False):
    ex = paper_two_link(joint_motor)
    eq = equations(ex["chain"], coordinates=ex["coordinates"], generalized=ex["generalized"],
                   wrenches=ex["wrenches"])
    return eq, ex["symbols"]


def _hand_lagrangian(S, eq, joint_motor=False):
    L1, L2, m1, m2, I1, I2, g, N1, N2 = (S[k] for k in "L1 L2 m1 m2 I1 I2 g N1 N2".split())
    t = sp.Symbol("t")
    th = [sp.Function("th1")(t), sp.Function("th2")(t)]
    C1 = sp.Matrix([L1 * sp.cos(th[0]), L1 * sp.sin(th[0])])
    C2 = 2 * L1 * sp.Matrix([sp.cos(th[0]), sp.sin(th[0])]) + L2 * sp.Matrix([sp.cos(th[1]), sp.sin(th[1])])
    v1, v2 = C1.diff(t), C2.diff(t)
    T = (m1 * v1.dot(v1) + m2 * v2.dot(v2) + I1 * th[0].diff(t) ** 2 + I2 * th[1].diff(t) ** 2) / 2
    V = g * (m1 * C1[1] + m2 * C2[1])
    Lag = T - V
    Q = [N1 - N2, N2] if joint_motor else [N1, N2]
    out = []
    for k in range(2):
        e = Lag.diff(th[k].diff(t)).diff(t) - Lag.diff(th[k]) - Q[k]
        sub = {}
        for x, s, sd, sdd in zip(th, eq.q, eq.qd, eq.qdd):
            sub[x.diff(t, 2)] = sdd
            sub[x.diff(t)] = sd
        e = e.subs(sub).subs(dict(zip(th, eq.q)))
        out.append(e)
    return out


def _zero(e):
    return sp.simplify(sp.expand(sp.expand_trig(e))) == 0


def test_equations_match_hand_lagrangian():
    for motor in (False, True):
        eq, S = _derive(motor)
        ref = _hand_lagrangian(S, eq, motor)
        for k, e in enumerate(eq.eom()):
            assert _zero(e.lhs - e.rhs - ref[k]), (k, motor)


def test_paper_quantities_and_the_omitted_bracket():
    eq, S = _derive()
    L1, L2, m1, m2, I1, I2, g, N1, N2 = (S[k] for k in "L1 L2 m1 m2 I1 I2 g N1 N2".split())
    t1, t2 = eq.q
    assert _zero(eq.M[0, 0] - ((m1 + 4 * m2) * L1 ** 2 + I1))  # (3.13)
    assert _zero(eq.M[0, 1] - 2 * m2 * L1 * L2 * sp.cos(t1 - t2))
    assert _zero(eq.M[1, 1] - (m2 * L2 ** 2 + I2))
    assert _zero(eq.Q[0] - (-(m1 + 2 * m2) * g * L1 * sp.cos(t1) + N1))  # (3.12)
    assert _zero(eq.Q[1] - (-m2 * g * L2 * sp.cos(t2) + N2))
    assert _zero(eq.brackets[1, 1, 0] - 2 * m2 * L1 * L2 * sp.sin(t1 - t2))  # (3.14)
    # the paper says [22,1] is the only non-zero bracket; [11,2] is not zero
    assert _zero(eq.brackets[0, 0, 1] + 2 * m2 * L1 * L2 * sp.sin(t1 - t2))
    for a, b, c in ((0, 0, 0), (0, 1, 0), (0, 1, 1), (1, 1, 1)):
        assert eq.brackets[a, b, c] == 0


def test_composed_vectors_match_paper():
    """vω_1, vω_2 of (3.11) and XY_11, XY_22 of (3.9); XY_12 = XY_21 = 0."""
    eq, S = _derive()
    L1, L2, m1, m2 = S["L1"], S["L2"], S["m1"], S["m2"]
    t1, t2 = eq.q
    V = eq.composed_vectors()
    c1, s1, c2, s2 = sp.cos(t1), sp.sin(t1), sp.cos(t2), sp.sin(t2)
    vw1 = sp.Matrix([-L1 * s1, L1 * c1, 0, 0, 0, 1, -2 * L1 * s1, 2 * L1 * c1, 0, 0, 0, 0])
    vw2 = sp.Matrix([0, 0, 0, 0, 0, 0, -L2 * s2, L2 * c2, 0, 0, 0, 1])
    xy11 = sp.Matrix([-m1 * L1 * c1, -m1 * L1 * s1, 0, 0, 0, 0, -2 * m2 * L1 * c1, -2 * m2 * L1 * s1, 0, 0, 0, 0])
    xy22 = sp.Matrix([0] * 6 + [-m2 * L2 * c2, -m2 * L2 * s2, 0, 0, 0, 0])
    for got, want in ((V["vw"][0], vw1), (V["vw"][1], vw2), (V["XY"][0][0], xy11), (V["XY"][1][1], xy22),
                      (V["XY"][0][1], sp.zeros(12, 1)), (V["XY"][1][0], sp.zeros(12, 1))):
        assert all(_zero(x) for x in got - want)

"""Symbolic equations (composedyn.symbolic) against the numeric dynamics.

The numeric path (Robot.mass_matrix / coriolis_matrix / gravity_torques, equal
to Pinocchio elsewhere) is the reference; M includes the armature on both sides.
"""

import re
import warnings

import numpy as np
import pytest
import sympy as sp

import composedyn as cd
from composedyn.dynamics.symbolic import chain_from_dh

ROBOTS = ("two_link", "planar3r", "puma560", "stanford")


@pytest.fixture(scope="module")
def derived():
    """Robot, equations and NumPy functions of each robot, derived once for this module."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ROBOTS:
            robot = cd.load(name)
            eq = cd.symbolic.equations(robot)
            out[name] = (robot, eq, eq.functions())
    return out


def _close(got, ref):
    """Within 1e-10 absolute and 1e-12 relative to the largest entry (Stanford's torques reach ~1e3)."""
    err = np.abs(got - ref).max()
    assert err <= 1e-10 and err <= 1e-12 * max(1.0, np.abs(ref).max()), err


@pytest.mark.parametrize("name", ROBOTS)
def test_symbolic_matches_numeric(derived, name):
    robot, eq, f = derived[name]
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-np.pi, np.pi, (6, robot.dof)), rng.normal(size=(6, robot.dof)),
                  rng.normal(size=(6, robot.dof)))
    _close(f["M"](q), robot.mass_matrix(q))
    _close(f["C"](q, qd), robot.coriolis_matrix(q, qd))
    _close(f["g"](q), robot.gravity_torques(q))
    _close(f["tau"](q, qd, qdd), robot.inverse_dynamics(q, qd, qdd, friction=False))
    # a single state (no batch axis), substituted directly into the sympy matrices
    sub = dict(zip(eq.q, q[0])) | dict(zip(eq.qd, qd[0]))
    M = np.array(eq.M.xreplace(sub).evalf(), dtype=float)
    np.testing.assert_allclose(M, robot.mass_matrix(q[0]), rtol=0, atol=1e-10)


def test_functions_broadcast(derived):
    robot, eq, f = derived["planar3r"]
    q = np.zeros((4, 1, 3))
    qd = np.ones((5, 3))
    assert f["C"](q, qd).shape == (4, 5, 3, 3)
    assert f["M"](np.zeros(3)).shape == (3, 3)
    with pytest.raises(ValueError):
        f["M"](np.zeros(4))


@pytest.mark.parametrize("name", ("two_link", "planar3r"))
def test_mdot_minus_2c_is_skew_symbolically(name):
    """With every parameter symbolic, N = dM/dt - 2C satisfies N + N^T = 0 identically."""
    eq = cd.symbolic.equations(cd.load(name), parameters=True)
    n = eq.n
    Md = sp.zeros(n, n)
    for k in range(n):
        Md += eq.M.diff(eq.q[k]) * eq.qd[k]
    N = Md - 2 * eq.C
    S = (N + N.T).applyfunc(lambda e: sp.simplify(sp.expand(sp.expand_trig(e))))
    assert S == sp.zeros(n, n)
    assert eq.parameters  # the parameters really were symbols


def test_parameters_substitute_back(derived):
    robot, eq_num, _ = derived["planar3r"]
    eq = cd.symbolic.equations(robot, parameters=True)
    assert {"m1", "g"} <= {s.name for s in eq.parameters}
    assert "g" in {s.name for s in eq.g.free_symbols}
    f = eq.functions()  # parameters replaced by the robot's values
    q = np.random.default_rng(3).normal(size=(3, 3))
    np.testing.assert_allclose(f["M"](q), robot.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(f["g"](q), robot.gravity_torques(q), atol=1e-12)


@pytest.mark.parametrize("convention", ("standard", "modified"))
def test_dh_rows_with_symbols(convention):
    """A 3-dof DH table with symbolic lengths, substituted, equals the numeric DH importer."""
    a2, d1, d3, m2, alpha1 = sp.symbols("a2 d1 d3 m2 alpha1", real=True)
    sym_rows = [
        dict(a=0, alpha=alpha1, d=d1, theta=0, mass=3.0, com=[0, 0.05, -0.1], inertia=[0.1, 0.2, 0.15]),
        dict(a=a2, alpha=0, d=0, theta=0.3, mass=m2, com=[-0.2, 0, 0.01], inertia=[0.02, 0.3, 0.3]),
        dict(a=0, alpha=np.pi / 2, d=d3, theta=0, joint="prismatic", mass=1.0, com=[0, 0, -0.1],
             inertia=[0.01, 0.01, 0.002]),
    ]
    vals = {a2: 0.4, d1: 0.3, d3: 0.15, m2: 2.5, alpha1: -np.pi / 2}
    chain = chain_from_dh(sym_rows, convention=convention, gravity=(0, 0, -9.81))
    eq = cd.symbolic.equations(chain, simplify=False)
    f = eq.functions(values=vals)
    num_rows = [{k: (float(v.subs(vals)) if isinstance(v, sp.Expr) else v) for k, v in r.items()} for r in sym_rows]
    robot = cd.from_dh(num_rows, convention=convention, gravity=(0, 0, -9.81))
    rng = np.random.default_rng(5)
    q, qd = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    np.testing.assert_allclose(f["M"](q), robot.mass_matrix(q), atol=1e-10)
    np.testing.assert_allclose(f["C"](q, qd), robot.coriolis_matrix(q, qd), atol=1e-10)
    np.testing.assert_allclose(f["g"](q), robot.gravity_torques(q), atol=1e-10)
    with pytest.raises(ValueError, match="no numeric values"):
        eq.functions()


def test_generalised_coordinates_transform(derived):
    """Absolute link angles for the 3R arm: M_th = J^T M J, g_th = J^T g, tau_th = J^T tau."""
    robot, _, _ = derived["planar3r"]
    th = sp.symbols("th1:4", real=True)
    eq = cd.symbolic.equations(robot, coordinates=[th[0], th[1] - th[0], th[2] - th[1]], generalized=th)
    J = np.array([[1, 0, 0], [-1, 1, 0], [0, -1, 1]], float)
    f = eq.functions()
    rng = np.random.default_rng(11)
    t, td, tdd = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    q, qd, qdd = J @ t, J @ td, J @ tdd
    np.testing.assert_allclose(f["M"](t), J.T @ robot.mass_matrix(q) @ J, atol=1e-12)
    np.testing.assert_allclose(f["g"](t), J.T @ robot.gravity_torques(q), atol=1e-12)
    np.testing.assert_allclose(f["tau"](t, td, tdd), J.T @ robot.inverse_dynamics(q, qd, qdd, friction=False),
                               atol=1e-12)
    # C stays in Christoffel form: dM/dt = C + C^T
    h = 1e-6
    Mdot = (f["M"](t + h * td) - f["M"](t - h * td)) / (2 * h)
    C = f["C"](t, td)
    np.testing.assert_allclose(Mdot, C + C.T, atol=1e-8)


def test_nonlinear_coordinate_map():
    """A nonlinear map exercises the Hessian term of XY: tau_th = J^T tau(q(th))."""
    robot = cd.load("two_link")
    u = sp.symbols("u1 u2", real=True)
    eq = cd.symbolic.equations(robot, coordinates=[u[0] + u[1] ** 2 / 2, u[1]], generalized=u, simplify=False)
    f = eq.functions()
    t, td, tdd = np.array([0.3, -0.7]), np.array([0.5, 1.1]), np.array([-0.2, 0.4])
    q = np.array([t[0] + t[1] ** 2 / 2, t[1]])
    J = np.array([[1, t[1]], [0, 1]])
    qd = J @ td
    qdd = J @ tdd + np.array([td[1] ** 2, 0])
    np.testing.assert_allclose(f["tau"](t, td, tdd), J.T @ robot.inverse_dynamics(q, qd, qdd, friction=False),
                               atol=1e-12)


def test_c_code_agrees_with_numpy(derived, tmp_path):
    import ctypes
    import shutil
    import subprocess

    if shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    robot, eq, f = derived["puma560"]
    src = eq.c_code(prefix="puma")
    assert "puma_M" in src and "puma_tau" in src
    (tmp_path / "puma.c").write_text(src)
    lib = tmp_path / "libpuma.so"
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "puma.c"), "-lm"], check=True)
    so = ctypes.CDLL(str(lib))
    P = ctypes.POINTER(ctypes.c_double)
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = (np.ascontiguousarray(rng.uniform(-3, 3, 6)) for _ in range(3))
        out = np.zeros(6)
        so.puma_tau(q.ctypes.data_as(P), qd.ctypes.data_as(P), qdd.ctypes.data_as(P), out.ctypes.data_as(P))
        np.testing.assert_allclose(out, f["tau"](q, qd, qdd), atol=1e-12)
        M = np.zeros(36)
        so.puma_M(q.ctypes.data_as(P), M.ctypes.data_as(P))
        np.testing.assert_allclose(M.reshape(6, 6), f["M"](q), atol=1e-12)


def test_latex_and_text(derived):
    _, eq, _ = derived["two_link"]
    tex = eq.latex()
    assert tex.startswith("\\begin{align*}") and "\\ddot{q_{1}}" in tex
    txt = eq.pretty()
    assert "M[1,1]" in txt and "c[1,1,2]" in txt
    assert printed_brackets(txt) == nonzero_brackets(eq)
    G1 = eq.bracket_matrix(0)
    assert G1 == G1.T and sp.expand((sp.Matrix([eq.qd]) * G1)[0, 1] - eq.C[0, 1]) == 0


def test_stanford_with_every_parameter_symbolic(derived):
    """Masses, centres of mass, inertias, joint offsets, armature and g as symbols, substituted back."""
    robot, _, _ = derived["stanford"]
    eq = cd.symbolic.equations(robot, parameters=True)
    assert len(eq.parameters) > 30
    f = eq.functions()
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-2, 2, (4, 6)), rng.normal(size=(4, 6))
    np.testing.assert_allclose(f["M"](q), robot.mass_matrix(q), rtol=0, atol=1e-10)
    np.testing.assert_allclose(f["C"](q, qd), robot.coriolis_matrix(q, qd), rtol=0, atol=1e-10)
    np.testing.assert_allclose(f["g"](q), robot.gravity_torques(q), rtol=0, atol=1e-10)


def test_mimic_joints_as_dependent_coordinates():
    """q3 = -0.5 q2 + 0.1 (mimic): the reduced symbolic equations equal Robot's G^T-projected ones."""
    from composedyn.dynamics import schema

    g = schema.new_graph("mimic_arm", gravity=(0, -9.81, 0))
    schema.add_link(g, "base")
    prev = "base"
    for i, (m, L) in enumerate(((2.0, 0.4), (1.5, 0.3), (0.5, 0.2))):
        schema.add_link(g, f"l{i}", m, (L / 2, 0.01, 0), np.diag([0.001, m * L * L / 12, m * L * L / 12]))
        T = np.eye(4)
        T[0, 3] = 0.0 if i == 0 else 0.35
        schema.add_joint(g, f"j{i}", prev, f"l{i}", origin=T, axis=(0, 0, 1) if i < 2 else (0, 1, 0),
                         armature=0.01 * (i + 1), mimic=("j1", -0.5, 0.1) if i == 2 else None)
        prev = f"l{i}"
    robot = cd.from_graph(g)
    assert robot.dof == 2
    eq = cd.symbolic.equations(robot)
    assert [s.name for s in eq.q] == ["q1", "q2"]
    f = eq.functions()
    rng = np.random.default_rng(9)
    q, qd, qdd = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    np.testing.assert_allclose(f["M"](q), robot.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(f["g"](q), robot.gravity_torques(q), atol=1e-12)
    np.testing.assert_allclose(f["tau"](q, qd, qdd), robot.inverse_dynamics(q, qd, qdd, friction=False), atol=1e-12)


def printed_brackets(text: str) -> dict:
    """{(a, b, g) 1-based: printed expression} of the ``c[a,b,g] = ...`` lines of ``Equations.pretty()``."""
    out = {}
    for line in text.splitlines():
        m = re.fullmatch(r"c\[(\d+),(\d+),(\d+)\] = (.+)", line)
        if m:
            key = tuple(int(x) for x in m.groups()[:3])
            assert key not in out, line
            out[key] = m.group(4)
    return out


def nonzero_brackets(eq) -> dict:
    n = eq.n
    return {(a + 1, b + 1, c + 1): sp.sstr(eq.brackets[a, b, c])
            for a in range(n) for b in range(a, n) for c in range(n) if eq.brackets[a, b, c] != 0}


def test_bracket_names_stay_unambiguous_beyond_nine_coordinates():
    """[1 2, 11] and [12, 1 1] would print alike without separators; every printed name maps back to its entry."""
    from composedyn.dynamics.symbolic.equations import Equations

    n = 12
    q = sp.symbols(f"q1:{n + 1}")
    B = sp.MutableDenseNDimArray.zeros(n, n, n)
    for a, b, c in [(0, 1, 10), (0, 10, 1), (1, 10, 0), (9, 1, 10), (10, 11, 0), (0, 0, 11)]:
        B[a, b, c] = B[b, a, c] = sp.Symbol(f"k_{a}_{b}_{c}") * sp.cos(q[c])
    eq = Equations(q, sp.symbols(f"q1:{n + 1}d"), sp.symbols(f"q1:{n + 1}dd"), sp.eye(n), sp.zeros(n, n),
                   sp.zeros(n, 1), sp.ImmutableDenseNDimArray(B), sp.zeros(n, 1), name="chain")
    printed = printed_brackets(eq.pretty())
    assert printed == nonzero_brackets(eq) and len(printed) == 6
    assert printed[(2, 10, 11)] == "k_9_1_10*cos(q11)"  # [2 10, 11]: a <= b, symmetric
    assert "c_{2,10,11}" in eq.latex()

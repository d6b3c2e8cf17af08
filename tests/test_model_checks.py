"""The compiled model is frozen, and numbers that overflow the dynamics are refused at load."""

import re
import warnings

import numpy as np
import pytest

import composedyn as cd
from composedyn import ModelError, ModelWarning
from random_robots import random_urdf


def test_model_arrays_are_read_only_and_limits_are_copies():
    robot = cd.load("panda")
    arrays = [v for v in vars(robot.model).values() if isinstance(v, np.ndarray)]
    assert len(arrays) > 20 and not any(a.flags.writeable for a in arrays)
    with pytest.raises(ValueError):
        robot.model.mass[0] = 1.0
    q = np.full(robot.dof, 0.3)
    before = robot.inverse_dynamics(q, q, q)
    lim = robot.limits
    lim["velocity"][:] = 0.01
    lim["effort"][:] = 0.0
    assert np.all(robot.limits["velocity"] > 0.01) and np.all(robot.limits["effort"] > 0.0)
    assert np.array_equal(robot.inverse_dynamics(q, q, q), before)


def _two_link(mass="1.0", length="0.5"):
    return f"""<robot name="big">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="{length} 0 0"/><mass value="{mass}"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="l2"><inertial><origin xyz="{length} 0 0"/><mass value="{mass}"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <origin xyz="{length} 0 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


@pytest.mark.parametrize("mass,length", [("1e308", "0.5"), ("1.0", "1e308"), ("1e200", "1e60")])
def test_overflowing_urdf_is_refused_at_load(mass, length):
    with pytest.raises(ModelError, match="overflow|non-finite"):
        cd.from_urdf(_two_link(mass, length))


def test_overflowing_dh_table_is_refused_at_load():
    rows = [dict(a=1e308, alpha=0.0, d=0.0, theta=0.0, joint="revolute", mass=1.0, com=[-0.5, 0, 0],
                 inertia=np.eye(3) * 0.01) for _ in range(2)]
    with pytest.raises(ModelError, match="<dh table>|overflow"):
        cd.from_dh(rows)


def test_implausible_but_finite_numbers_warn_and_strict_refuses():
    with pytest.warns(ModelWarning, match="heavier than"):
        cd.from_urdf(_two_link("1e6", "0.5"))
    with pytest.raises(ModelError, match="strict"):
        cd.from_urdf(_two_link("1e6", "0.5"), strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cd.from_urdf(_two_link("2.0", "0.5"))  # an ordinary robot loads silently


def test_zero_mass_with_inertia_warns_and_dynamics_stay_finite():
    with pytest.warns(ModelWarning, match="zero mass but non-zero rotational inertia"):
        robot = cd.from_urdf(_two_link("0.0", "0.5"))
    q = np.array([0.2, -0.4])
    assert np.all(np.isfinite(robot.mass_matrix(q)))


def _model_warnings(load) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load()
    return [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]


def test_puma560_gives_one_warning_naming_only_links_of_its_table():
    (msg,) = _model_warnings(lambda: cd.load("puma560"))
    named = set(re.findall(r"'([^']+)'", msg.split(".toml:", 1)[1]))
    assert "zero mass but non-zero rotational inertia" in msg
    assert named and named <= {f"link{i}" for i in range(1, 7)}, msg


def test_massless_dh_row_with_inertia_is_named_by_its_row_link_in_both_conventions():
    rows = [dict(a=0.3, alpha=0.0, d=0.0, theta=0.0, mass=2.0, com=[-0.15, 0, 0], inertia=[0.01, 0.02, 0.02]),
            dict(a=0.2, alpha=0.0, d=0.0, theta=0.0, mass=0.0, com=[0, 0, 0], inertia=[0.0, 0.0, 0.05], name="wrist")]
    for convention in ("standard", "modified"):
        msgs = _model_warnings(lambda: cd.from_dh(rows, convention=convention))
        massless = [m for m in msgs if "zero mass" in m]
        assert len(msgs) == 1 and len(massless) == 1, msgs
        assert massless[0].endswith("zero mass but non-zero rotational inertia on links ['wrist']"), massless


@pytest.mark.parametrize("seed,n", [(3, 5), (8, 22)])
def test_random_robots_load_without_numeric_warnings(seed, n):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        cd.from_urdf(random_urdf(seed, n))

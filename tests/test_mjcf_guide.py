"""docs/guide/mjcf.md: its Python blocks run (in order, one namespace, in a scratch folder), and
what its comments say holds against MuJoCo."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco
import numpy as np
import pytest

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "mjcf.md"


@pytest.mark.filterwarnings("ignore::composedyn.ModelWarning")  # the scene's box, left out
def test_guide_blocks_run_and_agree_with_mujoco(tmp_path, monkeypatch):
    code = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert len(code) == 4
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__guide__"}
    run = [lambda k=k, block=block: exec(compile(block, f"mjcf.md python block {k + 1}", "exec"), ns)
           for k, block in enumerate(code)]
    run[0]()
    m = mujoco.MjModel.from_xml_string(ns["ARM"])
    d = mujoco.MjData(m)
    d.qpos[:] = ns["q"]
    mujoco.mj_forward(m, d)
    assert np.allclose(ns["tau"], d.qfrc_bias, atol=1e-12)  # at rest: gravity (damping is zero at rest)
    assert np.allclose(ns["robot"].frame_pose(ns["q"], "tool")[:3, 3], d.site_xpos[0], atol=1e-12)
    assert ns["robot"].limits["effort"].tolist() == [50.0, 20.0]
    run[1]()
    m = mujoco.MjModel.from_xml_string(ns["CRAWLER"])
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = ns["qpos"], ns["qvel"]
    mujoco.mj_forward(m, d)
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    T = np.eye(m.nv)
    T[:3, :3] = d.xmat[m.body("torso").id].reshape(3, 3)  # MuJoCo's linear velocity = R (the base-axes one)
    assert np.allclose(ns["M"], T.T @ M @ T, atol=1e-12)
    assert np.allclose(T @ ns["v"], ns["qvel"], atol=1e-15)
    run[2]()
    assert ns["robot"].joint_names == ("a1",) and ns["robot"].floating
    run[3]()
    chain = ns["chain"]
    assert chain.joint_names == ("crank_joint",) and chain.dependent_names == ("coupler_joint", "rocker_joint")
    assert (chain.loops[0].kind, chain.loops[0].plane) == ("planar", "xz")
    m = mujoco.MjModel.from_xml_string(ns["FOURBAR"])
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = chain.assemble([1.0]), chain.velocities([1.0], [0.5])  # tree order = MuJoCo's here
    mujoco.mj_forward(m, d)
    assert np.abs(d.efc_pos).max() < 1e-12  # the loop closes as MuJoCo's connect
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d.qacc[:] = chain.accelerations([1.0], [0.5], [0.0])
    mujoco.mj_inverse(m, d)
    W = chain.velocities([1.0], [1.0])
    assert np.allclose(ns["tau"], W @ d.qfrc_inverse, atol=1e-10)

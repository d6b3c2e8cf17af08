"""MuJoCo as a second oracle for floating-base robots: the same URDF loaded with a free root joint.

``mujoco`` is imported at the top: a missing MuJoCo fails the tests that use this module (it is
in the ``test`` extra), it never skips them.

MuJoCo's URDF import and what is done about it:

- ``<visual>`` and ``<collision>`` are removed first (no mesh files needed; the dynamics do not
  depend on them), and so are ``<gazebo>`` and ``<transmission>``;
- a ``<mujoco><compiler .../></mujoco>`` element keeps every link as its own body with its own name
  (``fusestatic="false"``: by default MuJoCo fuses links hung by fixed joints into their parent) and
  the URDF inertias as they are (``balanceinertia="false"``, ``inertiafromgeom="false"``);
- the URDF root link becomes a body welded to the world; MuJoCo's importer has no floating-base
  option, so a free joint (named ``FREE_JOINT``) is added to that body through ``mujoco.MjSpec``;
- joint damping, Coulomb friction (``frictionloss``) and armature are zeroed (Pinocchio's ``rnea``
  has none of them) and constraints are disabled (joint limits would add forces to ``mj_inverse``
  at configurations outside them);
- MuJoCo refuses a link whose inertia matrix is not positive definite (ANYmal B, HyQ and Go1 of
  example-robot-data have such base links), Pinocchio accepts it.
"""

from __future__ import annotations

import mujoco
import numpy as np
from lxml import etree

FREE_JOINT = "free_base"
_STRIPPED = "//visual|//collision|//gazebo|//transmission"


def _xml(urdf: str):
    """Root element of a URDF file path or XML string."""
    text = urdf if urdf.lstrip().startswith("<") else open(urdf, encoding="utf-8").read()
    return etree.fromstring(text.encode(), etree.XMLParser(remove_comments=True, resolve_entities=False))


def mujoco_urdf(urdf: str) -> str:
    """URDF file path or XML string -> the XML string MuJoCo loads (see the module docstring)."""
    root = _xml(urdf)
    for el in root.xpath(_STRIPPED):
        el.getparent().remove(el)
    etree.SubElement(etree.SubElement(root, "mujoco"), "compiler", discardvisual="true", fusestatic="false",
                     balanceinertia="false", inertiafromgeom="false", angle="radian")
    return etree.tostring(root, encoding="unicode")


def urdf_link_masses(urdf: str) -> dict[str, float]:
    """Mass (kg) of every URDF link, 0 for links without ``<inertial>``."""
    masses = {}
    for link in _xml(urdf).findall("link"):
        mass = link.find("inertial/mass")
        masses[link.get("name")] = 0.0 if mass is None else float(mass.get("value"))
    return masses


def load_floating(urdf: str) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """MuJoCo model and data of a URDF (path or XML string) with a free joint on its root link."""
    spec = mujoco.MjSpec.from_string(mujoco_urdf(urdf))
    bodies = list(spec.worldbody.bodies)
    assert len(bodies) == 1, f"one root link expected, MuJoCo made {[b.name for b in bodies]}"
    bodies[0].add_freejoint(name=FREE_JOINT)
    model = spec.compile()
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    model.dof_armature[:] = 0.0
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    return model, mujoco.MjData(model)


def mass_matrix(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Dense joint-space inertia matrix (nv, nv) at ``data.qpos`` (runs ``mj_forward``)."""
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    return M

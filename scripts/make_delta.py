"""Write the bundled Delta robot (robots/delta.urdf and robots/delta.loops.toml) from its published data.

    python scripts/make_delta.py [--out robots]

Source: B. Alikoç, V. Šustr, F. Zítek, J. Řehořík, P. Burget, A. Lomakin, "Motion Modelling and
Simulation of a 5-Axis Industrial Delta Robot", with its public data set (github.com/testbedCIIRC/
delta-robot-public): the Autonox24 RL5-1450-6kg Delta, CAD masses and inertias in
``RL5_6kg_Inertia_Mass.m`` (Inertias.Solid 2-5, 18) and lengths in ``Basic_3DoF_Delta_Dynamic_Param.m``
(the "basic 3-DoF Delta": the wrist and telescopic shafts removed).  Every number below is copied
from there or derived from them with the formula next to it.

Model: each leg is an upper arm (with its elbow pin, a rigid cross bar) on an actuated hip, and a
parallelogram of two bars, each on a universal joint at its end of the pin (axis 1 parallel to
the pin, axis 2 normal to it: a ball joint without the idle spin about the bar) and a ball joint
at the travelling plate (a 3-D ``position`` loop per bar, 18 equations).  The plate hangs on a
virtual 6-joint chain from the base (x, y, z slides, then x, y, z rotations), all dependent
coordinates: 3 hips + 12 universal + 6 plate = 21 tree joints, 21 - 18 = 3 degrees of freedom.
The plate's orientation is then kept by the parallelograms themselves (each forbids the plate
to turn about the normal of its plane), as in the real robot.

References: R. Clavel, "Delta, a fast robot with parallel geometry", 18th ISIR (1988), for the
architecture.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

# ---- published (Alikoç et al., data set files named in the docstring) ----
R0 = 0.330  # m, circumradius of the base triangle: hip joint points A_i from the base centre (r0)
L1 = 0.420  # m, upper arm, hip axis to elbow pin (l1)
L2 = 1.055  # m, forearm bars, ball centre to ball centre (l2)
R3 = 0.125  # m, circumradius of the plate triangle: midpoint of each pair of plate balls (r3)
M_ARM = 3.696  # kg, upper arm (Solid 2)
C_ARM = 0.2463  # m, its centre of mass along the arm (Solid 2 CoM x; the 0.027 m y offset is dropped)
I_ARM = 0.208218 - 3.47 * 0.17224**2 - 0.226 * 0.42**2  # kg m^2, about the hip-parallel axis (Solid 2 MoI z)
M_PIN = 0.226  # kg, elbow pin (Solid 4), centred on the elbow
I_PIN = (1.56006e-05, 0.000622941, 0.000616676)  # kg m^2, about its own axis, then the two normal ones
M_BAR = 0.525  # kg, one forearm bar (Solid 3; the parallelogram has two)
I_BAR = (5.22934e-05, 0.043009, 0.0430094)  # kg m^2 about its centre: along the bar, then normal
M_PLATE = 2.916  # kg, travelling plate (Solid 5)

# ---- derived, with the assumption stated ----
W = float(np.sqrt(12 * I_PIN[1] / M_PIN))  # m, bar spacing = pin length, the pin as a thin rod (I = m w^2 / 12)
I_PLATE = (M_PLATE * R3**2 / 4, M_PLATE * R3**2 / 4, M_PLATE * R3**2 / 2)  # uniform disk of radius r3 (none published)
NOMINAL = 1e-6  # kg, the massless links between the axes of the universal and virtual joints
HIP0 = 0.3  # rad, assembly guess: every upper arm 0.3 rad below the horizontal, plate centred


def arm_inertial() -> tuple[float, float, tuple[float, float, float]]:
    """Mass, centre of mass along the arm and inertia (xx, yy, zz) at it of upper arm + pin.

    Arm frame: x along the arm, y the hip axis.  Only the inertia about y enters the dynamics (the
    arm turns about the hip axis alone); about x and z the arm is taken as a rod (I_xx = I_yy / 100,
    I_zz = I_yy) since those are not published.
    """
    m = M_ARM + M_PIN
    c = (M_ARM * C_ARM + M_PIN * L1) / m
    yy = I_ARM + M_ARM * (C_ARM - c) ** 2 + I_PIN[0] + M_PIN * (L1 - c) ** 2
    xx = I_ARM / 100 + I_PIN[1]
    zz = I_ARM + M_ARM * (C_ARM - c) ** 2 + I_PIN[2] + M_PIN * (L1 - c) ** 2
    return m, c, (xx, yy, zz)


def link(name: str, mass: float = NOMINAL, com=(0.0, 0.0, 0.0), inertia=None) -> str:
    ixx, iyy, izz = inertia if inertia is not None else (1e-9, 1e-9, 1e-9)
    return (f'  <link name="{name}">\n    <inertial>\n      <origin xyz="{com[0]:.6g} {com[1]:.6g} {com[2]:.6g}"/>\n'
            f'      <mass value="{mass:.6g}"/>\n      <inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{iyy:.6g}" '
            f'iyz="0" izz="{izz:.6g}"/>\n    </inertial>\n  </link>\n')


def joint(name: str, kind: str, parent: str, child: str, axis: str, xyz=(0.0, 0.0, 0.0), yaw: float = 0.0,
          limits=(-3.1, 3.1), effort: float = 0.0, velocity: float = 20.0) -> str:
    return (f'  <joint name="{name}" type="{kind}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
            f'    <origin xyz="{float(xyz[0])!r} {float(xyz[1])!r} {float(xyz[2])!r}" rpy="0.0 0.0 {float(yaw)!r}"/>\n'
            f'    <axis xyz="{axis}"/>\n    <limit lower="{limits[0]}" upper="{limits[1]}" effort="{effort}" '
            f'velocity="{velocity}"/>\n  </joint>\n')


def nominal_pose() -> tuple[float, float]:
    """(elbow angle about the pin, plate height) with every hip at HIP0 and the plate centred.

    In a leg's vertical plane the elbow is at (R0 + L1 cos t, -L1 sin t) (radial, height), the
    bar's plate end at (R3, z); |end - elbow| = L2 gives z; the bar's angle below the horizontal
    is t + elbow angle.
    """
    dr = R3 - R0 - L1 * np.cos(HIP0)
    dz = -np.sqrt(L2**2 - dr**2)
    z = -L1 * np.sin(HIP0) + dz
    return float(np.arctan2(-dz, dr) - HIP0), float(z)


def header() -> str:
    m, c, i = arm_inertial()
    return f"""<?xml version="1.0"?>
<!--
  Delta parallel robot (Clavel's Delta), three legs with two-bar parallelograms, for
  composedyn.load_closed_chain("delta"); the 18 loop closures are in delta.loops.toml.
  Written by scripts/make_delta.py (the formulas are there).
  Parameters: the Autonox24 RL5-1450-6kg Delta as published by B. Alikoc, V. Sustr, F. Zitek,
  J. Rehorik, P. Burget, A. Lomakin, "Motion Modelling and Simulation of a 5-Axis Industrial Delta
  Robot", public data set github.com/testbedCIIRC/delta-robot-public (RL5_6kg_Inertia_Mass.m,
  Basic_3DoF_Delta_Dynamic_Param.m), its 3-axis variant (no wrist, no telescopic shafts):
    base circumradius r0 = {R0} m (hip points), upper arm l1 = {L1} m, bars l2 = {L2} m,
    plate circumradius r3 = {R3} m;
    upper arm {M_ARM} kg, centre of mass {C_ARM} m from the hip (published 0.027 m side offset
    dropped), inertia about the hip-parallel axis 0.208218 - 3.47 (0.17224)^2 - 0.226 (0.42)^2
    = {I_ARM:.6f} kg m^2 (as in the data set); elbow pin {M_PIN} kg (inertia {I_PIN} kg m^2),
    lumped into the upper arm link: {m:.4f} kg, centre of mass {c:.5f} m, I = {i[1]:.6f} kg m^2
    about the hip-parallel axis;
    each bar {M_BAR} kg, centre at l2/2, inertia {I_BAR} kg m^2 (along, normal);
    plate {M_PLATE} kg.
  Derived (not published): bar spacing w = sqrt(12 I_pin / m_pin) = {W:.5f} m (the pin as a thin
  rod); plate inertia of a uniform disk of radius r3 (the parallelograms keep the plate from
  turning, so it never enters the dynamics); upper arm inertia about its own and the third axis
  (rod-like; they never enter either, the arm turns about the hip axis only).  Not modelled: the
  gearbox (ratio 55, 2.07e-4 kg m^2 rotor side: 55^2 x 2.07e-4 = 0.626 kg m^2 at each hip) and motor.
  Joint limits are ours (none published; hips 150 N m and 10 rad/s as nominal checks).
  Links with mass {NOMINAL} kg are the massless gimbals of the universal joints and of the plate's
  virtual 6-joint chain (plate_x .. plate_rz), nominal so that no moving link is massless.
-->
"""


def write(out: Path) -> None:
    elbow, z = nominal_pose()
    m, c, inertia = arm_inertial()
    parts = [header(), '<robot name="delta">\n  <link name="base_link">\n  </link>\n']
    chain = [("plate_x", "prismatic", "1 0 0", "slider_x", (-1, 1)),
             ("plate_y", "prismatic", "0 1 0", "slider_y", (-1, 1)),
             ("plate_z", "prismatic", "0 0 1", "slider_z", (-2, 0)),
             ("plate_rx", "revolute", "1 0 0", "gimbal_x", (-1, 1)),
             ("plate_ry", "revolute", "0 1 0", "gimbal_y", (-1, 1)),
             ("plate_rz", "revolute", "0 0 1", "plate", (-1, 1))]
    parent = "base_link"
    for name, kind, axis, child, lim in chain:
        parts.append(joint(name, kind, parent, child, axis, limits=lim))
        parts.append(link(child, M_PLATE, inertia=I_PLATE) if child == "plate" else link(child))
        parent = child
    loops = []
    for i in range(3):
        phi = 2 * np.pi * i / 3
        cph, sph = float(np.cos(phi)), float(np.sin(phi))
        leg = i + 1
        parts.append(joint(f"hip{leg}", "revolute", "base_link", f"upper_arm{leg}", "0 1 0",
                           xyz=(R0 * cph, R0 * sph, 0.0), yaw=phi, limits=(-0.8, 1.6), effort=150, velocity=10))
        parts.append(link(f"upper_arm{leg}", m, (c, 0.0, 0.0), inertia))
        for s, side in (("a", 1.0), ("b", -1.0)):
            bar = f"bar{leg}{s}"
            parts.append(joint(f"elbow{leg}{s}", "revolute", f"upper_arm{leg}", f"cross{leg}{s}", "0 1 0",
                               xyz=(L1, side * W / 2, 0.0)))
            parts.append(link(f"cross{leg}{s}"))
            parts.append(joint(f"swing{leg}{s}", "revolute", f"cross{leg}{s}", bar, "0 0 1", limits=(-1.5, 1.5)))
            parts.append(link(bar, M_BAR, (L2 / 2, 0.0, 0.0), I_BAR))
            pt = (float(R3 * cph - side * W / 2 * sph), float(R3 * sph + side * W / 2 * cph), 0.0)
            loops.append((f"ball{leg}{s}", bar, pt))
    parts.append("</robot>\n")
    (out / "delta.urdf").write_text("".join(parts))
    guess = ", ".join([f"hip{k} = {HIP0}" for k in (1, 2, 3)]
                      + [f"elbow{k}{s} = {elbow:.6f}" for k in (1, 2, 3) for s in "ab"] + [f"plate_z = {z:.6f}"])
    toml = [f"""# Loop closures of delta.urdf (format: composedyn.importers.loops), written by scripts/make_delta.py;
# parameters and model: robots/README.md.  Each parallelogram bar ends on a ball joint at the plate:
# one 3-D point closure per bar, 6 bars, 18 equations; with 21 tree joints (3 hips, 6 x 2 universal
# joints, 6 virtual plate joints) the three hip motors are the independent coordinates.

[closure]
independent = ["hip1", "hip2", "hip3"]
# plate centred {-z:.4f} m below the base with every upper arm {HIP0} rad below the horizontal
guess = {{ {guess} }}
"""]
    for name, bar, pt in loops:
        toml.append(f'\n[[loops]]\nname = "{name}"\nlink_a = "{bar}"\npoint_a = [{L2!r}, 0.0, 0.0]\n'
                    f'link_b = "plate"\npoint_b = [{pt[0]!r}, {pt[1]!r}, {pt[2]!r}]\nkind = "position"\n')
    (out / "delta.loops.toml").write_text("".join(toml))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "robots"))
    write(Path(ap.parse_args(argv).out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

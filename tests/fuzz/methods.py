"""The public methods the fuzzer calls, with the role of each argument.

Roles: ``q`` a configuration (nq,), ``v`` a rate or torque (nv,), ``q0`` an optional
configuration, ``frame`` a frame name, ``reference`` "world"/"local", ``bool`` a flag,
``fext`` a mapping link -> wrench, ``smooth`` a friction width, ``dt`` a time step,
``target`` a 4x4 pose, ``contacts`` contact frames, ``scale``/``seed``/``samples``/``size``
numbers, ``path`` a file name, ``mu`` a friction coefficient; ``out`` an output array of the
result's shape.  Each entry: method -> (positional roles, keyword roles, weight); a weight
below 1 makes an expensive method rarer.
"""

from __future__ import annotations

Spec = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...], float]

_DYNAMICS: dict[str, Spec] = {
    "inverse_dynamics": ((("q", "q"), ("qd", "v"), ("qdd", "v")),
                         (("f_ext", "fext"), ("friction", "bool"), ("out", "out")), 3),
    "forward_dynamics": ((("q", "q"), ("qd", "v"), ("tau", "v")),
                         (("f_ext", "fext"), ("friction", "bool"), ("smooth_friction", "smooth"), ("out", "out")), 3),
    "mass_matrix": ((("q", "q"),), (("out", "out"),), 3),
    "coriolis_matrix": ((("q", "q"), ("qd", "v")), (), 2),
    "gravity_torques": ((("q", "q"),), (), 2),
    "bias_torques": ((("q", "q"), ("qd", "v")), (), 2),
    "composed_vectors": ((("q", "q"),), (), 0.5),
    "kinetic_energy": ((("q", "q"), ("qd", "v")), (), 1),
    "potential_energy": ((("q", "q"),), (), 1),
    "energy": ((("q", "q"), ("qd", "v")), (), 1),
    "link_poses": ((("q", "q"),), (), 0.5),
    "frame_pose": ((("q", "q"), ("frame", "frame")), (), 2),
    "jacobian": ((("q", "q"), ("frame", "frame")), (("reference", "reference"),), 2),
    "frame_velocity": ((("q", "q"), ("qd", "v"), ("frame", "frame")), (("reference", "reference"),), 1.5),
    "frame_acceleration": ((("q", "q"), ("qd", "v"), ("qdd", "v"), ("frame", "frame")),
                           (("reference", "reference"),), 1.5),
    "center_of_mass": ((("q", "q"),), (), 1),
    "com_jacobian": ((("q", "q"),), (), 1),
    "task_inertia": ((("q", "q"), ("frame", "frame")),
                     (("reference", "reference"), ("translational", "bool"), ("damping", "damping")), 1),
    "regressor": ((("q", "q"), ("qd", "v"), ("qdd", "v")), (("joint_terms", "bool"), ("offset", "bool")), 1.5),
    "inertial_parameters": ((), (), 0.3),
    "parameter_names": ((), (("joint_terms", "bool"), ("offset", "bool")), 0.3),
    "base_parameters": ((), (("joint_terms", "bool"), ("samples", "samples"), ("seed", "seed")), 0.15),
    "inverse_dynamics_derivatives": ((("q", "q"), ("qd", "v"), ("qdd", "v")),
                                     (("f_ext", "fext"), ("friction", "bool"), ("smooth_friction", "smooth")), 2),
    "forward_dynamics_derivatives": ((("q", "q"), ("qd", "v"), ("tau", "v")),
                                     (("f_ext", "fext"), ("friction", "bool"), ("smooth_friction", "smooth")), 2),
    "linearize": ((("q", "q"), ("qd", "v"), ("tau", "v")),
                  (("dt", "dt"), ("friction", "bool"), ("smooth_friction", "smooth")), 1.5),
    "perturbed": ((), (("scale", "scale"), ("seed", "seed")), 0.3),
    "to_urdf": ((("path", "path"),), (), 0.4),
}

FIXED_METHODS: dict[str, Spec] = {
    **_DYNAMICS,
    "full_positions": ((("q", "q"),), (), 0.5),
    "mimic_torques": ((("q", "q"), ("qd", "v"), ("qdd", "v")), (("friction", "bool"),), 0.5),
    "inverse_kinematics": ((("frame", "frame"), ("target", "target")), (("q0", "q0"), ("position_only", "bool")), 0.4),
}

FLOATING_METHODS: dict[str, Spec] = {
    **_DYNAMICS,
    "centroidal_momentum_matrix": ((("q", "q"),), (), 1),
    "centroidal_momentum": ((("q", "q"), ("v", "v")), (), 1),
    "neutral": ((), (), 0.2),
    "random_configuration": ((), (("size", "size"), ("seed", "seed")), 0.5),
    "integrate": ((("q", "q"), ("v", "v")), (("dt", "dt"),), 2),
    "difference": ((("q0", "q"), ("q1", "q")), (), 2),
    "configuration_rate": ((("q", "q"), ("v", "v")), (), 1.5),
    "normalize": ((("q", "q"),), (), 1.5),
    "contact_inverse_dynamics": ((("q", "q"), ("v", "v"), ("a", "v"), ("contacts", "contacts")), (), 0.5),
}

# robot.fast: method -> (inputs, result tail ("n" or "nn"), takes batches, the Robot method it equals)
FAST_METHODS: dict[str, tuple[int, str, bool, str]] = {
    "inverse_dynamics": (3, "n", True, "inverse_dynamics"),
    "rnea": (3, "n", True, "inverse_dynamics"),
    "mass_matrix": (1, "nn", True, "mass_matrix"),
    "coriolis_matrix": (2, "nn", True, "coriolis_matrix"),
    "bias_torques": (2, "n", False, "bias_torques"),
    "gravity_torques": (1, "n", True, "gravity_torques"),
    "forward_dynamics": (3, "n", True, "forward_dynamics"),
}

# The result of these floating-base methods depends on the quaternion's norm (the group
# operations); every other method must equal its value at the normalised quaternion.
SCALE_DEPENDENT = {"integrate", "configuration_rate", "difference", "normalize"}

# Results that are random or whose recomputation differs by construction are compared on shape only.
NOT_COMPARED = {"to_urdf", "perturbed"}

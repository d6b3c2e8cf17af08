"""Drake as the oracle for SDFormat: the same file loaded by Drake's parser (libsdformat).

``pydrake`` is imported at the top: a missing Drake fails the tests that use this module (it is in
the ``test`` extra), it never skips them.

Drake's coordinates are matched to composedyn's by joint name (a joint of nested model ``inner``
of model ``m`` is joint ``j`` of Drake's model instance ``m::inner``, composedyn's ``inner::j``);
a free model's base is Drake's quaternion floating joint (q = quaternion wxyz, position; v =
angular then linear velocity, world axes), converted with :func:`composedyn.convert_floating`.
Drake's ``CalcInverseDynamics`` with no applied forces is ``M a + C v`` (no gravity, no joint
damping); ``CalcGravityGeneralizedForces`` is the generalised force of gravity, ``-g(q)``, so
composedyn's ``inverse_dynamics(..., friction=False)`` is the difference of the two.
"""

from __future__ import annotations

import numpy as np
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import MultibodyPlant
from pydrake.multibody.tree import MultibodyForces

import composedyn as cd


class DrakeModel:
    """A Finalized Drake plant of an SDFormat file, with composedyn's coordinate order.

    ``robot``: the composedyn robot loaded from the same file; ``packages``: {name: folder} for
    Drake's package map (``model://name/...`` URIs); ``weld``: a link (composedyn's name), or a list of
    them, Drake welds to the world at its default pose (composedyn's ``floating=False``)."""

    def __init__(self, sdf: str, robot, packages: dict | None = None, model: str | None = None,
                 weld: str | None = None):
        self.robot = robot
        self.plant = MultibodyPlant(0.0)
        parser = Parser(self.plant)
        for name, folder in (packages or {}).items():
            parser.package_map().Add(name, str(folder))
        if sdf.lstrip().startswith("<"):
            instances = parser.AddModelsFromString(sdf, "sdf")
        else:
            instances = parser.AddModels(sdf)
        gravity = robot.base.gravity if robot.floating else robot.model.gravity
        if not robot.floating and robot.graph.graph.get("root") != "world":
            raise AssertionError("composedyn's fixed SDF robots have a world root link")
        self.plant.mutable_gravity_field().set_gravity_vector(np.asarray(gravity, float))
        self.top = self.plant.GetModelInstanceName(instances[0]) if model is None else model
        for link in [weld] if isinstance(weld, str) else (weld or []):
            body = self.plant.GetBodyByName(*self._scoped(link))
            pose = self.plant.GetDefaultFloatingBaseBodyPose(body)
            self.plant.WeldFrames(self.plant.world_frame(), body.body_frame(), pose)
        self.plant.Finalize()
        self.context = self.plant.CreateDefaultContext()
        names = robot.joint_names
        self.q_index = np.array([self._joint(n).position_start() for n in names], dtype=int)
        self.v_index = np.array([self._joint(n).velocity_start() for n in names], dtype=int)
        assert self.plant.num_velocities() == robot.dof, (self.plant.num_velocities(), robot.dof)
        if robot.floating:
            body = self.plant.GetBodyByName(*self._scoped(robot.base.link))
            assert body.is_floating_base_body(), f"Drake's floating body is not {robot.base.link!r}"
            self.base_q, self.base_v = body.floating_positions_start(), body.floating_velocities_start_in_v()

    def _scoped(self, name: str):
        scope, _, local = name.rpartition("::")
        instance = self.plant.GetModelInstanceByName(self.top + ("::" + scope if scope else ""))
        return local, instance

    def _joint(self, name: str):
        """Drake's joint of composedyn's scoped name: in the model instance of its scope, or (a joint of
        an outer model whose child is in a nested one) in the instance Drake gave it."""
        local, instance = self._scoped(name)
        if self.plant.HasJointNamed(local, instance):
            return self.plant.GetJointByName(local, instance)
        from pydrake.multibody.tree import ModelInstanceIndex

        found = [ModelInstanceIndex(i) for i in range(self.plant.num_model_instances())
                 if self.plant.GetModelInstanceName(ModelInstanceIndex(i)).startswith(self.top + "::")
                 and self.plant.HasJointNamed(local, ModelInstanceIndex(i))]
        assert len(found) == 1, f"joint {name!r}: {len(found)} Drake joints named {local!r} under {self.top!r}"
        return self.plant.GetJointByName(local, found[0])

    def state(self, q, v, a=None):
        """composedyn (q, v[, a]) -> Drake's (q, v[, a]) vectors."""
        nq, nv = self.plant.num_positions(), self.plant.num_velocities()
        qd, vd, ad = np.zeros(nq), np.zeros(nv), np.zeros(nv)
        n = len(self.q_index)
        if self.robot.floating:
            qc, vc, ac = cd.convert_floating(q, v, a, source="composedyn", target="drake")
            qd[self.base_q:self.base_q + 7], vd[self.base_v:self.base_v + 6] = qc[:7], vc[:6]
            if a is not None:
                ad[self.base_v:self.base_v + 6] = ac[:6]
            q, v, a = qc[7:], vc[6:], None if a is None else ac[6:]
        qd[self.q_index], vd[self.v_index] = q[-n:] if n else [], v[-n:] if n else []
        if a is not None:
            ad[self.v_index] = a[-n:] if n else []
        return qd, vd, ad

    def set_state(self, q, v):
        """Put composedyn's (q, v) into the Drake context."""
        qd, vd, _ = self.state(q, v)
        self.plant.SetPositions(self.context, qd)
        self.plant.SetVelocities(self.context, vd)

    def velocity_map(self, q) -> np.ndarray:
        """(nv, nv) T with Drake's v = T composedyn's v at configuration q."""
        nv = self.robot.dof
        return np.stack([self.state(q, e)[1] for e in np.eye(nv)], axis=1) if nv else np.zeros((0, 0))

    def mass_matrix(self, q) -> np.ndarray:
        """Drake's mass matrix in composedyn's velocity coordinates, T^T M T."""
        self.set_state(q, np.zeros(self.robot.dof))
        T = self.velocity_map(q)
        return T.T @ self.plant.CalcMassMatrix(self.context) @ T

    def inverse_dynamics(self, q, v, a) -> np.ndarray:
        """Drake's M a + C v - tau_gravity, as forces dual to composedyn's velocity."""
        self.set_state(q, v)
        _, _, ad = self.state(q, v, a)
        tau = (self.plant.CalcInverseDynamics(self.context, ad, MultibodyForces(self.plant))
               - self.plant.CalcGravityGeneralizedForces(self.context))
        if not self.robot.floating:
            return tau[self.v_index]
        n = len(self.v_index)
        qd, _, _ = self.state(q, v)
        drake_order = np.concatenate([tau[self.base_v:self.base_v + 6], tau[self.v_index]])
        q_drake_layout = np.concatenate([qd[self.base_q:self.base_q + 7], qd[self.q_index]])
        out = cd.convert_floating_forces(q_drake_layout, drake_order, source="drake", target="composedyn")
        assert out.shape == (6 + n,)
        return out


    def frame_errors(self, q) -> tuple[float, int]:
        """(largest difference, number compared) between composedyn's frame poses at q and the poses
        in the world of Drake's frames (links, ``<frame>`` elements, and for a joint its frame on the
        child link) of the same scoped name."""
        self.set_state(q, np.zeros(self.robot.dof))
        worst, seen = 0.0, 0
        for name in self.robot.frame_names:
            local, instance = self._scoped(name) if name != "world" else (None, None)
            if local is not None and self.plant.HasFrameNamed(local, instance):
                frame = self.plant.GetFrameByName(local, instance)
            elif local is not None and self.plant.HasJointNamed(local, instance):  # the frame of a joint
                frame = self.plant.GetJointByName(local, instance).frame_on_child()
            else:
                continue
            X = frame.CalcPoseInWorld(self.context)
            T = self.robot.frame_pose(q, name)
            worst = max(worst, float(np.abs(T[:3, 3] - X.translation()).max()),
                        float(np.abs(T[:3, :3] - X.rotation().matrix()).max()))
            seen += 1
        return worst, seen


def random_state(robot, rng):
    """Random (q, v, a) of a composedyn robot: joints in [-1, 1], a random unit base quaternion."""
    if robot.floating:
        q = robot.random_configuration(seed=int(rng.integers(1 << 30)))
    else:
        q = rng.uniform(-1.0, 1.0, robot.dof)
    return q, rng.normal(size=robot.dof), rng.normal(size=robot.dof)


def compare(sdf: str, robot, packages=None, samples: int = 5, seed: int = 0, tol: float = 1e-9, model=None,
            weld=None):
    """Mass matrix and inverse dynamics of ``robot`` against Drake at random states (see
    :class:`DrakeModel` for the arguments); returns the largest relative error seen."""
    oracle = DrakeModel(sdf, robot, packages, model, weld)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(samples):
        q, v, a = random_state(robot, rng)
        M, Md = robot.mass_matrix(q), oracle.mass_matrix(q)
        tau, taud = robot.inverse_dynamics(q, v, a, friction=False), oracle.inverse_dynamics(q, v, a)
        for mine, ref in ((M, Md), (tau, taud)):
            err = float(np.abs(mine - ref).max() / max(1.0, np.abs(ref).max())) if ref.size else 0.0
            assert err < tol, f"composedyn vs Drake: relative error {err:.3g}\n{mine}\n{ref}"
            worst = max(worst, err)
    return worst

"""The torque check of sampled motions against the robot's limits: readers, blocks, limits, reports."""

"""Controllers: computed torque, operational space, LQR."""

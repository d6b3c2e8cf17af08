"""Forward simulation: integration, stick-slip friction, tracking of reference motions."""

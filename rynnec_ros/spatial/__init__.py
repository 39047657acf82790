"""Metric spatial cognition from depth, intrinsics, poses and masks (pure numpy/scipy, no ROS)."""

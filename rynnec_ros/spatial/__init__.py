"""Metric spatial cognition from depth, intrinsics, poses and masks (pure numpy/scipy, no ROS)."""

from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams
from rynnec_ros.spatial.templates import TASK_BY_NAME, TASKS, recognise_question

__all__ = ["TASKS", "TASK_BY_NAME", "SpatialEngine", "SpatialParams", "recognise_question"]

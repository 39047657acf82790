"""Metric spatial cognition from depth, intrinsics, poses and masks (pure numpy/scipy, no ROS)."""

from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams
from rynnec_ros.spatial.parse import parse_question, parse_structured
from rynnec_ros.spatial.templates import TASK_BY_NAME, TASKS

__all__ = ["TASKS", "TASK_BY_NAME", "SpatialEngine", "SpatialParams", "parse_question", "parse_structured"]

"""Metric spatial cognition from depth, intrinsics, poses and masks (pure numpy/scipy, no ROS)."""

from rynnec_ros.spatial.engine import SpatialEngine, SpatialParams
from rynnec_ros.spatial.plan import SpatialPlan, Unanswerable, parse_question, parse_structured
from rynnec_ros.spatial.tasks import TASK_BY_NAME, TASKS

__all__ = [
    "TASKS",
    "TASK_BY_NAME",
    "SpatialEngine",
    "SpatialParams",
    "SpatialPlan",
    "Unanswerable",
    "parse_question",
    "parse_structured",
]

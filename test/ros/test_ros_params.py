"""The node's typed, grouped parameters (rynnec_ros/ros/params.py), pure Python.

Expected values are the ROS 2 semantics the node must keep, written by hand: rclpy stores `ros2 param set
/rynnec ingest_fps 2` as the double 2.0 once the pre-set callback converted it (a parameter's type is its
declared default's), a set request is all-or-nothing (rcl_interfaces SetParametersResult: one reason,
nothing applied), and the flat list rclpy declares is the union of the groups, each name once.
"""

from __future__ import annotations

from dataclasses import fields

import pytest

from rynnec_ros.core.buffer import BufferLimits
from rynnec_ros.ros.params import GROUP_OF, GROUPS, PARAM_BY_NAME, PARAMS, NodeParams


def test_every_parameter_is_declared_once_in_exactly_one_group() -> None:
    names = [f.name for group in GROUPS.values() for f in fields(group)]
    assert len(names) == len(set(names)) == len(PARAMS)
    assert [p.name for p in PARAMS] == names
    assert set(GROUP_OF) == set(PARAM_BY_NAME)


def test_defaults_are_read_typed_from_their_group() -> None:
    p = NodeParams()
    assert p.buffer.ingest_fps == 2.0 and isinstance(p.buffer.ingest_fps, float)
    assert p.requests.request_queue_size == 4 and isinstance(p.requests.request_queue_size, int)
    assert p.engine.backend == "torch" and p.inputs.qos_reliability == "best_effort"
    assert p.values() == {spec.name: spec.default for spec in PARAMS}


def test_an_integer_for_a_double_is_stored_as_the_double() -> None:
    p = NodeParams().replace({"ingest_fps": 3, "buffer_max_age_s": 60})
    assert p.buffer.ingest_fps == 3.0 and type(p.buffer.ingest_fps) is float
    assert type(p.buffer.buffer_max_age_s) is float


def test_a_set_is_all_or_nothing_with_the_reason() -> None:
    before = NodeParams()
    with pytest.raises(ValueError, match=r"ingest_fps must be in \[0.0, 1000.0\]"):
        before.replace({"sample_fps": 0.5, "ingest_fps": -1.0})
    assert before == NodeParams()  # frozen: nothing was applied
    with pytest.raises(ValueError, match="unknown parameter 'no_such'"):
        before.replace({"no_such": 1})
    with pytest.raises(ValueError, match="qos_depth must be of type int, got str"):
        before.replace({"qos_depth": "5"})


def test_changed_names_what_differs_and_groups_stay_separate() -> None:
    a = NodeParams()
    b = a.replace({"publish_markers": False, "buffer_max_mb": 64})
    assert sorted(b.changed(a)) == ["buffer_max_mb", "publish_markers"]
    assert b.engine is a.engine and b.inputs is a.inputs  # untouched groups are shared, not copied
    assert GROUP_OF["publish_markers"] == "outputs" and GROUP_OF["buffer_max_mb"] == "buffer"


def test_buffer_limits_are_the_buffer_groups_values() -> None:
    p = NodeParams().replace({"buffer_max_frames": 10, "buffer_max_mb": 3, "buffer_max_age_s": 5.0,
                              "time_jump_back_s": 2.0, "time_jump_forward_s": 7.0,
                              "time_jump_confirm_frames": 4})
    assert p.buffer_limits() == BufferLimits(max_frames=10, max_bytes=3 << 20, max_age_s=5.0, jump_back_s=2.0,
                                             jump_forward_s=7.0, jump_confirm_frames=4)


def test_the_engine_spec_comes_from_the_engine_group() -> None:
    p = NodeParams().replace({"checkpoint": "/models/RynnEC-2B", "dtype": "float16",
                              "max_visual_tokens": 4096})
    spec = p.engine_spec()
    assert (spec.checkpoint, spec.dtype, spec.max_visual_tokens) == ("/models/RynnEC-2B", "float16", 4096)

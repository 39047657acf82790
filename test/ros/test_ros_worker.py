"""The node's worker and lifecycle edge cases, driven in-process: real rclpy node, real engine.

Camera frames go straight into the colour callback and requests through the service callback's
``_submit``, so a test can place an event exactly between two steps (a deactivate during an inference,
a time jump between decoding a request's masks and picking its window) without racing DDS.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.ros

H, W = 32, 40


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "rynnec-worker" and t.is_alive()]


@pytest.fixture(scope="module")
def node(endless_checkpoint):
    import rclpy
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter

    from rynnec_ros.ros.node import CognitionNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    overrides = [
        Parameter("checkpoint", value=str(endless_checkpoint)),
        Parameter("ingest_fps", value=0.0),
        Parameter("max_new_tokens", value=2),
        Parameter("spatial_source", value="model"),
    ]
    n = CognitionNode("rynnec_worker_test", context=ctx, parameter_overrides=overrides)
    assert n.trigger_configure() == TransitionCallbackReturn.SUCCESS
    assert n.trigger_activate() == TransitionCallbackReturn.SUCCESS
    yield n
    n._stop_worker("the test is over")
    n.destroy_node()
    rclpy.shutdown(context=ctx)


def _feed(node, stamp_ns: int, value: int = 0) -> None:
    from rynnec_ros.ros import convert

    rgb = np.random.default_rng(value).integers(0, 256, (H, W, 3), dtype=np.uint8)
    node._on_color(convert.rgb_to_image(rgb, stamp_ns, "cam"))


def _ask(question: str, max_new_tokens: int = 0, **fields):
    from rynnec_ros.srv import AskQuestion

    return AskQuestion.Request(question=question, max_new_tokens=max_new_tokens, **fields)


def _submit_in_thread(node, request) -> tuple[threading.Thread, list]:
    from rynnec_ros.srv import AskQuestion

    out: list = []
    th = threading.Thread(target=lambda: out.append(node._submit("ask", request, AskQuestion.Response())))
    th.start()
    deadline = time.monotonic() + 30
    while node._running is None:
        assert time.monotonic() < deadline, "the worker never started the request"
        time.sleep(0.01)
    return th, out


def test_deactivate_cancels_the_running_generation_at_its_next_token(node) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    _feed(node, 1 * 10**9)
    th, out = _submit_in_thread(node, _ask("Describe everything.", max_new_tokens=8192))
    time.sleep(0.3)  # decoding
    t0 = time.monotonic()
    assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    took = time.monotonic() - t0
    th.join(10)
    assert not out[0].success and "cancelled during inference" in out[0].message
    assert node._worker is None and _workers() == []
    assert took < node._join_timeout_s, f"deactivate waited {took:.1f} s for the worker"
    assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    assert len(_workers()) == 1


def test_activate_refuses_while_the_old_worker_is_inside_a_long_step(node) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    engine = node._engine
    real_answer = engine.answer
    gate = threading.Event()

    def long_prefill(*args, **kwargs):  # a step that never reaches a token callback until released
        gate.wait(30)
        return real_answer(*args, **kwargs)

    engine.answer = long_prefill
    node._join_timeout_s = 0.3
    try:
        _feed(node, 2 * 10**9)
        th, out = _submit_in_thread(node, _ask("What is here?"))
        assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
        old = _workers()
        assert len(old) == 1 and node._worker is old[0]
        # A second worker next to the stuck one would run two inferences at once: activate fails.
        assert node.trigger_activate() == TransitionCallbackReturn.FAILURE
        assert not node._active and _workers() == old
        gate.set()
        th.join(10)
        assert not out[0].success and "cancelled during inference" in out[0].message
        old[0].join(10)
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        assert len(_workers()) == 1 and _workers() != old
    finally:
        gate.set()
        del engine.answer
        node._join_timeout_s = 10.0
    from rynnec_ros.srv import AskQuestion

    res = node._submit("ask", _ask("And now?", max_new_tokens=2), AskQuestion.Response())
    assert res.success, res.message


def test_mask_frame_replaced_between_decoding_and_window_is_a_clear_failure(node) -> None:
    from rynnec_ros.msg import Region, RegionMask
    from rynnec_ros.srv import AskQuestion

    from rynnec_ros.ros import convert

    t = 30 * 10**9
    _feed(node, t, value=1)
    mask = np.zeros((H, W), bool)
    mask[4:12, 5:20] = True
    size, counts = convert.mask_to_rle(mask)
    region = Region(object_id=1, masks=[RegionMask(stamp=convert.ns_to_stamp(t), size=size, counts=counts)])
    decode = node._decode_regions

    def decode_then_camera_jumps(regions):
        decoded = decode(regions)
        _feed(node, t - 10 * 10**9, value=2)  # the clock jumps back: the buffer resets
        _feed(node, t + 500_000, value=3)  # a new frame within stamp_tolerance_s of the mask's stamp
        return decoded

    node._decode_regions = decode_then_camera_jumps
    try:
        res = node._submit("ask", _ask("What is <object0>?", regions=[region]), AskQuestion.Response())
    finally:
        del node._decode_regions
    assert not res.success
    assert f"the frame at {t} ns carrying a region mask left the buffer" in res.message


def test_arm_length_applies_at_run_time_and_a_failed_configure_holds_nothing(node) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter

    before = node._spatial
    assert node.set_parameters([Parameter("arm_length_m", value=1.5)])[0].successful
    assert node._spatial is not before and node._spatial.params.arm_length_m == 1.5
    (zero,) = node.set_parameters([Parameter("arm_length_m", value=0.0)])
    assert not zero.successful and "(0, 100.0]" in zero.reason
    assert node._spatial.params.arm_length_m == 1.5

    assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    assert node.trigger_cleanup() == TransitionCallbackReturn.SUCCESS

    def no_timer(*args, **kwargs):  # the last step of configure, after the engine and services exist
        raise RuntimeError("timer creation failed")

    node.create_timer = no_timer
    try:
        assert node.trigger_configure() == TransitionCallbackReturn.FAILURE
    finally:
        del node.create_timer
    assert node._engine is None and node._spatial is None and node._action is None
    ours = ("/ask", "/segment", "/list_frames")
    assert not [s.srv_name for s in node.services if s.srv_name.endswith(ours)]
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    assert node._spatial.params.arm_length_m == 1.5

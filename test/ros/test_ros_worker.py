"""The node's worker and lifecycle edge cases, driven in-process: real rclpy node, real engine.

Camera frames go straight into the colour callback and requests straight into the job queue (the path
the service and action callbacks take), so a test can place an event exactly between two steps (a
deactivate during an inference, a time jump between decoding a request's masks and picking its window)
without racing DDS.
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
    n.close("the test is over")
    n.destroy_node()
    rclpy.shutdown(context=ctx)


def _feed(node, stamp_ns: int, value: int = 0) -> None:
    from rynnec_ros.ros import convert

    rgb = np.random.default_rng(value).integers(0, 256, (H, W, 3), dtype=np.uint8)
    node._ingest.on_color(convert.rgb_to_image(rgb, stamp_ns, "cam"))


def _ask(question: str, max_new_tokens: int = 0, **fields):
    from rynnec_ros.srv import AskQuestion

    return AskQuestion.Request(question=question, max_new_tokens=max_new_tokens, **fields)


def _submit(node, request) -> tuple[threading.Event, list]:
    """Queue an ask the way the service callback does; the event fires when its one answer is in."""
    done, out = threading.Event(), []

    def finish(job, value, error) -> None:
        out.append((value, error))
        done.set()

    assert node._jobs.submit(node._job("ask", request, finish)) == ""
    return done, out


def _submit_running(node, request) -> tuple[threading.Event, list]:
    done, out = _submit(node, request)
    deadline = time.monotonic() + 30
    while node._jobs._running is None and not done.is_set():
        assert time.monotonic() < deadline, "the worker never started the request"
        time.sleep(0.01)
    return done, out


def test_deactivate_cancels_the_running_generation_at_its_next_token(node) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    from rynnec_ros.ros.node import WORKER_JOIN_S

    _feed(node, 1 * 10**9)
    done, out = _submit_running(node, _ask("Describe everything.", max_new_tokens=8192))
    time.sleep(0.3)  # decoding
    t0 = time.monotonic()
    assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    took = time.monotonic() - t0
    assert done.wait(10)
    assert out == [(None, "the node was deactivated")]
    assert not node._jobs.alive and _workers() == []
    assert took < WORKER_JOIN_S, f"deactivate waited {took:.1f} s for the worker"
    assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    assert len(_workers()) == 1


def test_ingest_while_a_request_runs_never_changes_its_frames(node) -> None:
    """The frame race: ingest replaces, evicts and re-stamps buffered frames while the worker reads."""
    for i in range(5):
        _feed(node, (40 + i) * 10**9, value=i)
    done, out = _submit_running(node, _ask("What changed?", max_new_tokens=64))
    for k in range(60):  # same stamps again with new pixels, and new frames
        _feed(node, (40 + k % 8) * 10**9, value=100 + k)
    assert done.wait(60)
    (value, error), = out
    assert error == "" and value.success, error
    stamps = [s.sec * 10**9 + s.nanosec for s in value.frame_stamps]
    assert stamps == sorted(set(stamps)) and 44 * 10**9 in stamps


def test_activate_refuses_while_the_old_worker_is_inside_a_long_step(node, monkeypatch) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    import rynnec_ros.ros.node as node_module

    engine = node._router.engine
    real_answer = engine.answer
    gate = threading.Event()

    def long_prefill(*args, **kwargs):  # a step that never reaches a cancellation check until released
        gate.wait(30)
        return real_answer(*args, **kwargs)

    monkeypatch.setattr(engine, "answer", long_prefill)
    monkeypatch.setattr(node_module, "WORKER_JOIN_S", 0.3)
    try:
        _feed(node, 2 * 10**9)
        done, out = _submit_running(node, _ask("What is here?"))
        assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
        old = _workers()
        assert len(old) == 1
        # A second worker next to the stuck one would run two inferences at once: activate fails.
        assert node.trigger_activate() == TransitionCallbackReturn.FAILURE
        assert node._state == "inactive" and _workers() == old
        gate.set()
        assert done.wait(10)
        assert out[0][1] == "the node was deactivated"
        old[0].join(10)
        assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        assert len(_workers()) == 1 and _workers() != old
    finally:
        gate.set()
    monkeypatch.undo()
    done, out = _submit(node, _ask("And now?", max_new_tokens=2))
    assert done.wait(30) and out[0][1] == "" and out[0][0].success


def test_mask_frame_replaced_between_decoding_and_window_is_a_clear_failure(node, monkeypatch) -> None:
    from rynnec_ros.msg import Region, RegionMask

    from rynnec_ros.core import masks as rle_codec
    from rynnec_ros.ros import convert, messages

    t = 60 * 10**9  # after every stamp the earlier tests fed
    _feed(node, t, value=1)
    mask = np.zeros((H, W), bool)
    mask[4:12, 5:20] = True
    rle = rle_codec.encode(mask)
    region = Region(object_id=1, masks=[RegionMask(stamp=convert.ns_to_stamp(t), size=rle["size"],
                                                   counts=rle["counts"])])
    decode = messages._regions

    def decode_then_camera_jumps(*args):
        decoded = decode(*args)
        for k in range(3):  # the clock jumps back (confirmed by three frames): the buffer resets
            _feed(node, t - 10 * 10**9 + k * 10**8, value=2)
        _feed(node, t + 500_000, value=3)  # a new frame within stamp_tolerance_s of the mask's stamp
        return decoded

    monkeypatch.setattr(messages, "_regions", decode_then_camera_jumps)
    done, out = _submit(node, _ask("What is <object0>?", regions=[region]))
    assert done.wait(30)
    assert f"the frame at {t} ns carrying a region mask left the buffer" in out[0][1]


def test_arm_length_applies_at_run_time_and_a_failed_configure_holds_nothing(node, monkeypatch) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter

    before = node._router.spatial
    assert node.set_parameters([Parameter("arm_length_m", value=1.5)])[0].successful
    assert node._router.spatial is not before and node._router.spatial.params.arm_length_m == 1.5
    (zero,) = node.set_parameters([Parameter("arm_length_m", value=0.0)])
    assert not zero.successful and "(0, 100.0]" in zero.reason
    assert node._router.spatial.params.arm_length_m == 1.5

    assert node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS
    assert node.trigger_cleanup() == TransitionCallbackReturn.SUCCESS

    def no_publisher(*args, **kwargs):  # the last step of configure, after the engine is loaded
        raise RuntimeError("publisher creation failed")

    monkeypatch.setattr(node, "create_lifecycle_publisher", no_publisher)
    assert node.trigger_configure() == TransitionCallbackReturn.FAILURE
    monkeypatch.undo()
    assert node._router is None and node._outputs is None and node._state == "unconfigured"
    assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
    assert node.trigger_activate() == TransitionCallbackReturn.SUCCESS
    assert node._router.spatial.params.arm_length_m == 1.5

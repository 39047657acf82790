"""The node in its own process with a planner client: round trips, rejection, timeouts, time jumps."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

pytestmark = pytest.mark.ros

H, W = 48, 64
T0 = 50 * 10**9


@pytest.fixture(scope="module")
def node(node_factory, endless_checkpoint):
    proc = node_factory({
        "checkpoint": str(endless_checkpoint),
        "qos_reliability": "reliable",
        "qos_depth": 50,
        "ingest_fps": 3,  # integers for float parameters, as `-p x:=3` and YAML give them
        "sample_fps": 0.0,
        "max_new_tokens": 4,
        "request_queue_size": 2,
        "time_jump_back_s": 5,
        "buffer_max_age_s": 300,
    })
    yield proc
    assert proc.alive(), proc.output()


@pytest.fixture(scope="module")
def client(node):
    from rynnec_ros.ros.client import CognitionClient

    with CognitionClient(client_name="test_node_client") as c:
        assert c.wait_for_node(60.0), node.output()
        yield c


def _frames(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (H, W, 3), dtype=np.uint8) for _ in range(n)]


def _publish(client, stamps: list[int], seed: int = 0) -> None:
    client.publish_frames(_frames(len(stamps), seed), stamps)
    assert client.wait_for_frames(stamps, 15.0), client.buffered_stamps()


@pytest.fixture(scope="module")
def stamps(client) -> list[int]:
    s = [T0 + i * 500_000_000 for i in range(6)]
    _publish(client, s)
    return s


def test_segmentation_masks_carry_buffered_stamps_and_frame_size(client, stamps) -> None:
    from rynnec_ros.core import masks as rle_codec
    from rynnec_ros.ros.convert import stamp_to_ns

    ans = client.segment("the bright object", object_id=9)
    res = client.last_response
    used = [stamp_to_ns(s) for s in res.frame_stamps]
    assert used and set(used) <= set(stamps) and used == sorted(used)
    assert len(res.masks) == len(used)
    for m in res.masks:
        assert stamp_to_ns(m.header.stamp) in used
        assert m.header.frame_id == "camera_color_optical_frame"
        assert list(m.size) == [H, W] and m.object_id == 9 and m.label == "the bright object"
        mask = rle_codec.decode({"size": list(m.size), "counts": m.counts})
        assert mask.shape == (H, W)
        if mask.any():
            ys, xs = np.nonzero(mask)
            assert (m.bbox.x_offset, m.bbox.y_offset) == (xs.min(), ys.min())
        assert 0.0 <= m.score <= 1.0
    assert ans.masks is not None and all(x is None or x.shape == (H, W) for x in ans.masks)
    assert {t.stage for t in res.timings} >= {"queue", "vision", "prefill", "decode", "sam2", "total"}


def test_segment_stream_action_answers_as_the_service_does(client, stamps) -> None:
    """action/Segment.action's result "means exactly what srv/Segment means": the same request on
    ~/segment and ~/segment_stream (greedy decoding, the same frames) gives the same masks, stamps and
    text, and the goal's feedback pieces add up to the model's text, status SUCCEEDED."""
    from action_msgs.msg import GoalStatus

    from rynnec_ros.ros.convert import stamp_to_ns

    pieces: list[str] = []
    frames = stamps[:3]
    by_service = client.segment("the bright object", frame_stamps_ns=frames, object_id=4)
    served = client.last_response
    handle = client.segment_async("the bright object", frame_stamps_ns=frames, object_id=4,
                                  on_text=pieces.append, timeout_s=60.0)
    assert handle.wait(90.0)
    by_action = handle.result()
    res = handle.response
    assert handle.status == GoalStatus.STATUS_SUCCEEDED and res.success, res
    assert [stamp_to_ns(s) for s in res.frame_stamps] == frames == handle.frame_stamps_ns
    assert [(stamp_to_ns(m.header.stamp), m.object_id, m.counts) for m in res.masks] == \
        [(stamp_to_ns(m.header.stamp), m.object_id, m.counts) for m in served.masks]
    assert by_action.text == by_service.text and res.answer == served.answer
    assert pieces and handle.pieces == len(pieces) and handle.feedback_text == "".join(pieces)
    assert all((a is None) == (b is None) and (a is None or (a == b).all())
               for a, b in zip(by_action.masks or [], by_service.masks or [], strict=True))


def test_segmentation_box_is_published_as_a_vision_msgs_detection(client, stamps) -> None:
    """~/detections_2d after a segmentation: one Detection2D per non-empty mask on the newest segmented
    frame, its box from the decoded mask (vision_msgs BoundingBox2D: centre and full size in pixels;
    pixel edges at integers, so columns x0..x1 give centre (x0 + x1 + 1) / 2 and width x1 - x0 + 1)."""
    from vision_msgs.msg import Detection2DArray

    from rynnec_ros.core import masks as rle_codec
    from rynnec_ros.ros.convert import stamp_to_ns

    got: list[Detection2DArray] = []
    sub = client.node.create_subscription(Detection2DArray, "/rynnec/detections_2d", got.append, 10)
    try:
        deadline = time.monotonic() + 10.0
        while client.node.count_publishers("/rynnec/detections_2d") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the node's writer matches this reader
        client.segment("the bright object", object_id=5)
        res = client.last_response
        while not got and time.monotonic() < deadline + 10.0:
            time.sleep(0.05)
    finally:
        client.node.destroy_subscription(sub)
    assert got, "no Detection2DArray on /rynnec/detections_2d"
    arr = got[-1]
    newest = res.masks[-1]
    assert stamp_to_ns(arr.header.stamp) == stamp_to_ns(newest.header.stamp)
    assert arr.header.frame_id == "camera_color_optical_frame"
    want = []
    for m in res.masks:
        mask = rle_codec.decode({"size": list(m.size), "counts": m.counts})
        if stamp_to_ns(m.header.stamp) == stamp_to_ns(newest.header.stamp) and mask.any():
            ys, xs = np.nonzero(mask)
            want.append(((xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2,
                         xs.max() - xs.min() + 1, ys.max() - ys.min() + 1, m.score))
    boxes = [(d.bbox.center.position.x, d.bbox.center.position.y, d.bbox.size_x, d.bbox.size_y,
              d.results[0].hypothesis.score) for d in arr.detections]
    assert len(boxes) == len(want)
    assert np.allclose(np.array(boxes, float).reshape(-1, 5), np.array(want, float).reshape(-1, 5))
    assert all((d.id, d.results[0].hypothesis.class_id) == ("5", "the bright object") for d in arr.detections)


def test_region_question_uses_the_mask_frames(client, stamps) -> None:
    from rynnec_ros.core.types import Region
    from rynnec_ros.ros.convert import stamp_to_ns

    mask = np.zeros((H, W), bool)
    mask[10:30, 5:40] = True
    region = Region(object_id=4, label="box", masks={0: mask})
    ans = client.ask("What is <object0>?", [region], frame_stamps_ns=[stamps[2]], options=["a", "b"])
    used = [stamp_to_ns(s) for s in client.last_response.frame_stamps]
    assert used == [stamps[2]]
    assert ans.source == "model" and isinstance(ans.text, str) and ans.object_ids == [4]
    # srv: with options the model's choice is the most probable option, its text that option's.
    res = client.last_response
    assert len(res.option_probabilities) == 2 and sum(res.option_probabilities) == pytest.approx(1.0)
    assert res.option_index == int(np.argmax(res.option_probabilities)) and res.answer == ["a", "b"][
        res.option_index]
    assert np.isnan(res.mean_token_logprob) and np.isnan(res.min_token_logprob)  # chosen, not generated
    assert ans.confidence == max(res.option_probabilities)  # Answer.confidence: the chosen option's
    # Window mode: masks on one frame, sampled window around it; the mask frame is always included.
    ans = client.ask("Where is <object0>?", [region], frame_stamps_ns=[stamps[3]], max_frames=3)
    assert stamps[3] in client.last_frame_stamps_ns
    # Generated text: its tokens' log-probabilities (their values are checked against upstream's logits
    # in test/model/test_model_parity.py), the minimum at most the mean, both <= 0.
    res = client.last_response
    assert res.min_token_logprob <= res.mean_token_logprob <= 0.0
    assert (ans.mean_token_logprob, ans.min_token_logprob) == (res.mean_token_logprob, res.min_token_logprob)
    assert ans.confidence == pytest.approx(np.exp(res.mean_token_logprob))  # geometric-mean token probability


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"question": ""}, "question is empty"),
        ({"question": "x" * 5000}, "max_question_chars"),
        ({"question": "q", "frame_stamps_ns": [123]}, "not in the buffer"),
        ({"question": "q", "mask": np.ones((H + 1, W), bool)}, "is not its frame's 48×64"),
        ({"question": "q", "mask": np.zeros((H, W), bool)}, "mask is empty"),
        ({"question": "q", "window_ns": (T0 + 10**9, T0)}, "after window_end"),
        ({"question": "q", "task": "no_such_task"}, "unknown spatial task"),
        ({"question": "q", "task": "t" * 5000}, "task has 5000 characters"),
        ({"question": "q", "task": "distance\x07"}, "task contains control characters"),
        ({"question": "q", "label": "l" * 5000}, "region 0 label has 5000 characters"),
        ({"question": "q", "label": "cup\x07 mug"}, "region 0 label contains control characters"),
        ({"question": "q", "max_new_tokens": 8193}, "max_new_tokens 8193 is more than the limit 8192"),
    ],
)
def test_bad_requests_fail_with_a_reason(client, stamps, kwargs, reason) -> None:
    from rynnec_ros.core.types import Region

    mask = kwargs.pop("mask", None)
    label = kwargs.pop("label", "")
    if label:
        mask = np.zeros((H, W), bool)
        mask[2:9, 3:11] = True
    if mask is not None:
        kwargs["regions"] = [Region(object_id=1, label=label, masks={0: mask})]
        kwargs["frame_stamps_ns"] = [stamps[0]]
    with pytest.raises(RuntimeError, match=reason):
        client.ask(**kwargs)


def test_queue_full_is_rejected_and_timeouts_are_reported(client, stamps, node) -> None:
    from rynnec_ros.srv import AskQuestion

    results: list[str] = []

    def long_ask() -> None:
        try:
            # long enough (the endless checkpoint never stops early) that the six requests overlap
            client.ask("Describe everything.", max_new_tokens=1000, timeout_s=60)
            results.append("ok")
        except RuntimeError as exc:
            results.append(str(exc))

    threads = [threading.Thread(target=long_ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert any("request queue full" in r for r in results), results
    assert "ok" in results
    # Per-request timeout, via the raw service so the client's own timeout does not fire first.
    _set_params(client, {"request_timeout_s": 0.2})
    try:
        # 8192 tokens take seconds even on the tiny model: the 0.2 s timeout must fire first.
        req = AskQuestion.Request(question="Describe everything.", max_new_tokens=8192)
        res = client._call(client._ask, req, 30.0)
        assert not res.success and "timed out after 0.2" in res.message
    finally:
        _set_params(client, {"request_timeout_s": 120.0})
    # The request's own deadline (srv: timeout_s, 0 = request_timeout_s), as a behaviour tree sets per call,
    # with the node's 120 s still in force; and the srv's range for it.
    t0 = time.monotonic()
    req = AskQuestion.Request(question="Describe everything.", max_new_tokens=8192, timeout_s=0.3)
    res = client._call(client._ask, req, 30.0)
    assert not res.success and "timed out after 0.3" in res.message and time.monotonic() - t0 < 20.0
    for bad in (-1.0, float("nan"), 1e9):
        res = client._call(client._ask, AskQuestion.Request(question="q", timeout_s=bad), 30.0)
        assert not res.success and "timeout_s" in res.message, (bad, res.message)
    assert node.alive()


def test_a_malformed_request_is_refused_while_an_inference_runs(client, stamps) -> None:
    """A bad request hears what was wrong at once, not after the running inference and the queue
    (issue 21): here a region whose mask names a stamp no frame has, sent while a long answer runs."""
    from action_msgs.msg import GoalStatus
    from rynnec_ros.action import Ask
    from rynnec_ros.msg import Region as RegionMsg
    from rynnec_ros.msg import RegionMask
    from rynnec_ros.srv import AskQuestion

    from rynnec_ros.ros.convert import ns_to_stamp

    # Two long answers (8192 tokens, ~3 s each here): one decoding, one waiting in the queue.
    long_req = AskQuestion.Request(question="Describe everything.", max_new_tokens=8192)
    done: list[object] = []
    workers = [threading.Thread(target=lambda: done.append(client._call(client._ask, long_req, 120.0)))
               for _ in range(2)]
    for w in workers:
        w.start()
    try:
        time.sleep(1.0)
        bad = AskQuestion.Request(question="What is <object0>?", regions=[RegionMsg(
            object_id=1, masks=[RegionMask(stamp=ns_to_stamp(stamps[0] + 123_456_789), size=[H, W],
                                           counts="any")])])  # refused at its stamp, before decoding
        res = client._call(client._ask, bad, 30.0)
        assert not res.success and "is not a buffered frame" in res.message
        # The same request as an ~/ask_stream goal: accepted (the goal response has no room for a
        # reason), then aborted with the reason, before it takes a queue slot.
        goal = Ask.Goal(question=bad.question, regions=bad.regions)
        handle = client._wait(client._ask_stream.send_goal_async(goal), time.monotonic() + 30.0, "acceptance")
        assert handle.accepted
        got = client._wait(handle.get_result_async(), time.monotonic() + 30.0, "the result")
        assert got.status == GoalStatus.STATUS_ABORTED
        assert not got.result.success and "is not a buffered frame" in got.result.message
        assert len(done) == 0, "both long answers should still be on their way"
    finally:
        for w in workers:
            w.join(120.0)
    assert len(done) == 2


_PARAM_CLIENTS: dict[str, object] = {}


def _param_client(client, service: str):
    """One client per parameter service for the whole module (each new client needs discovery)."""
    from rcl_interfaces.srv import GetParameters, SetParameters

    if service not in _PARAM_CLIENTS:
        kind = SetParameters if service == "set_parameters" else GetParameters
        cli = client.node.create_client(kind, f"/rynnec/{service}")
        assert cli.wait_for_service(timeout_sec=30.0), f"/rynnec/{service} not available"
        _PARAM_CLIENTS[service] = cli
    return _PARAM_CLIENTS[service]


def _set_params(client, values: dict[str, object]) -> list[str]:
    return client.set_parameters(values)


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("spatial_source", "magic", "must be one of auto, model, geometry"),
        ("sample_fps", -1.0, "must be in"),
        ("sample_fps", float("nan"), "finite"),
        ("max_frames_per_query", 0, "must be in"),
        ("live_window_block_frames", -1, "must be in"),
        ("device", "tpu", "cpu, cuda or cuda:N"),
        ("color_topic", "bad topic", "not a valid topic"),
        ("depth_topic", "/camera/1depth", "token must not start with a number"),  # rclpy's rule, at set time
        ("server_token_env", "1BAD-NAME", "not an environment variable name"),
        ("world_frame", "/map", "not a valid frame id"),
        ("arm_length_m", 0.0, "arm_length_m must be in (0, 100.0]"),
        ("request_queue_size", 65, "must be in [1, 64]"),
        ("ingest_fps", "fast", "must be of type float"),
    ],
)
def test_parameter_validation_rejects_with_reason(client, name, value, reason) -> None:
    (result,) = _set_params(client, {name: value})
    assert reason in result


def test_float_parameters_given_as_integers_are_floats_and_rclpy_parameters_can_be_set(client) -> None:
    from rcl_interfaces.msg import ParameterType
    from rcl_interfaces.srv import GetParameters

    get = _param_client(client, "get_parameters")

    def values() -> list:
        names = ["time_jump_back_s", "buffer_max_age_s", "ingest_fps", "use_sim_time"]
        return list(client._call(get, GetParameters.Request(names=names), 10.0).values)

    jump, age, fps, sim = values()
    assert (jump.type, jump.double_value) == (ParameterType.PARAMETER_DOUBLE, 5.0)
    assert (age.type, age.double_value) == (ParameterType.PARAMETER_DOUBLE, 300.0)
    assert (fps.type, fps.double_value) == (ParameterType.PARAMETER_DOUBLE, 3.0)
    # An integer at run time too (`ros2 param set /rynnec ingest_fps 2` sends PARAMETER_INTEGER): it is
    # stored as the double docs/ros.md declares (rclpy >= Iron has pre-set callbacks; Humble keeps the int).
    assert _set_params(client, {"ingest_fps": 2}) == [""]
    fps_after = values()[2]
    import rclpy.node

    if hasattr(rclpy.node.Node, "add_pre_set_parameters_callback"):
        assert (fps_after.type, fps_after.double_value) == (ParameterType.PARAMETER_DOUBLE, 2.0)
    assert _set_params(client, {"ingest_fps": 0}) == [""]
    assert "name must not be empty" in _set_params(client, {"": 1.0})[0]
    # rclpy's own parameters are not in the node's table and must stay settable (bags, simulators).
    assert not sim.bool_value
    assert _set_params(client, {"use_sim_time": True}) == [""]
    try:
        assert values()[3].bool_value
    finally:
        assert _set_params(client, {"use_sim_time": False}) == [""]


def test_valid_live_parameter_is_applied(client, stamps) -> None:
    (result,) = _set_params(client, {"max_frames_per_query": 2})
    try:
        assert result == ""
        client.ask("Which frames?", max_new_tokens=1)
        assert len(client.last_frame_stamps_ns) == 2 and client.last_frame_stamps_ns[-1] == stamps[-1]
    finally:
        _set_params(client, {"max_frames_per_query": 30})


def test_live_window_blocks_choose_the_recent_window(client, stamps) -> None:
    """sample_fps 0: every frame is a sample numbered by its ordinal (0..5 for the module's 6 frames,
    none evicted). max_frames 3: blocks of 2 start at the lowest even ordinal with 5 - start < 3, i.e.
    4; blocks of 1 at 3; the paper's sampling (0) thins all 6 with linspace(0, 5, 3) -> 0, 2, 5."""
    assert client.buffered_stamps() == stamps
    want = {2: stamps[4:], 1: stamps[3:], 0: [stamps[0], stamps[2], stamps[5]]}
    try:
        for block, expected in want.items():
            assert _set_params(client, {"max_frames_per_query": 3, "live_window_block_frames": block}) \
                == ["", ""]
            client.ask("Which frames?", max_new_tokens=1)
            assert client.last_frame_stamps_ns == expected, block
        # stamps given: exactly those frames, whatever the window mode
        assert _set_params(client, {"live_window_block_frames": 2}) == [""]
        client.ask("Which frames?", frame_stamps_ns=stamps[:2], max_new_tokens=1)
        assert client.last_frame_stamps_ns == stamps[:2]
    finally:
        _set_params(client, {"max_frames_per_query": 30, "live_window_block_frames": 0})


def test_parameter_services_answer_while_inference_runs(client, stamps) -> None:
    from rcl_interfaces.srv import GetParameters

    done = threading.Event()

    def long_ask() -> None:
        try:
            client.ask("Describe everything in detail.", max_new_tokens=8192, timeout_s=120)
        except RuntimeError as exc:  # the node's timeout below ends (and cancels) the long generation
            assert "timed out" in str(exc)
        finally:
            done.set()

    get = _param_client(client, "get_parameters")
    assert client.set_parameters({"request_timeout_s": 4.0}) == [""]
    worker = threading.Thread(target=long_ask)
    worker.start()
    time.sleep(0.5)  # the worker thread is now decoding
    latencies = []
    while not done.is_set() and len(latencies) < 10:
        t0 = time.monotonic()
        res = client._call(get, GetParameters.Request(names=["sample_fps", "checkpoint"]), 5.0)
        latencies.append((time.monotonic() - t0, not done.is_set()))
        assert res.values[0].double_value == 0.0
        t0 = time.monotonic()
        (ok,) = _set_params(client, {"publish_overlay": True})
        latencies.append((time.monotonic() - t0, not done.is_set()))
        assert ok == ""
    worker.join()
    assert client.set_parameters({"request_timeout_s": 120.0}) == [""]
    during = [t for t, running in latencies if running]
    assert len(during) >= 4, f"inference finished before the parameter calls were measured: {latencies}"
    assert max(during) < 0.2, during


def test_raising_request_queue_size_at_run_time_does_not_starve_other_callbacks(client, stamps) -> None:
    """Each queued request holds an executor thread, so the executor must fit the largest queue."""
    from rcl_interfaces.srv import GetParameters

    get = _param_client(client, "get_parameters")
    waiting = 10  # with the running one, more than the old executor's threads for the start value (2 + 6)
    assert _set_params(client, {"request_queue_size": waiting, "request_timeout_s": 4.0}) == ["", ""]
    results: list[str] = []

    def long_ask() -> None:
        try:
            client.ask("Describe everything.", max_new_tokens=3000, timeout_s=60)
            results.append("ok")
        except RuntimeError as exc:
            results.append(str(exc))

    threads = [threading.Thread(target=long_ask) for _ in range(waiting + 1)]
    try:
        for t in threads:
            t.start()
            time.sleep(0.05)  # spread the timeouts: a service's response queue holds 10 by default
        time.sleep(0.5)  # every request is now queued or running
        t0 = time.monotonic()
        client._call(get, GetParameters.Request(names=["sample_fps"]), 10.0)
        latency = time.monotonic() - t0
        for t in threads:
            t.join()
    finally:
        assert _set_params(client, {"request_queue_size": 2, "request_timeout_s": 120.0}) == ["", ""]
    assert latency < 2.0, f"parameter call waited {latency:.1f} s for a free executor thread"
    assert not [r for r in results if "queue full" in r], results
    assert len(results) == waiting + 1 and all(r == "ok" or "timed out" in r for r in results), results


def test_time_jump_resets_the_buffer_and_node_keeps_answering(client, stamps) -> None:
    old = list(stamps)
    new = [10**9 + i * 500_000_000 for i in range(3)]  # far behind: a looping bag / restarted clock
    _publish(client, new, seed=3)
    client.ask("What now?", max_new_tokens=1)
    assert client.last_frame_stamps_ns == new == client.buffered_stamps()
    with pytest.raises(RuntimeError, match="not in the buffer"):
        client.ask("q", frame_stamps_ns=[old[0]])
    stamps[:] = new


def test_ask_stream_action_streams_pieces_and_can_be_cancelled(client, stamps) -> None:
    pieces: list[str] = []
    ans = client.ask_stream("Describe the scene.", pieces.append, max_new_tokens=6)
    assert len(pieces) >= 1 and client.last_response.success
    assert "".join(pieces).startswith(ans.text[:5]) or ans.text == "".join(pieces).strip()
    assert len(client.last_response.frame_stamps) >= 1
    got: list[str] = []
    with pytest.raises(RuntimeError, match="cancelled"):
        client.ask_stream("Describe everything.", got.append, max_new_tokens=400, cancel_after_pieces=2)
    assert 2 <= len(got) < 400


def test_geometry_without_depth_or_camera_info_fails_with_the_reason(client, stamps) -> None:
    from rynnec_ros.core.types import Region

    mask = np.zeros((H, W), bool)
    mask[5:20, 5:20] = True
    region = Region(object_id=2, masks={0: mask})
    # spatial_confirm (a live parameter) changes nothing here: the data fail before any reading is checked
    assert client.set_parameters({"spatial_source": "geometry", "spatial_confirm": True}) == ["", ""]
    try:
        with pytest.raises(RuntimeError, match="geometry cannot answer"):
            client.ask("How far is <object0> from you?", [region], frame_stamps_ns=[stamps[-1]])
    finally:
        assert client.set_parameters({"spatial_source": "auto", "spatial_confirm": False}) == ["", ""]
    # auto: the same question falls back to the model, which says it answered.
    ans = client.ask("How far is <object0> from you?", [region], frame_stamps_ns=[stamps[-1]],
                     max_new_tokens=2)
    assert ans.source == "model" and ans.task == "distance_to_camera"

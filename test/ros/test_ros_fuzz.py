"""Fuzzed service requests: every request gets an answer (a reason when it fails), the node survives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.ros

STAMPS = [3 * 10**9 + i * 250_000_000 for i in range(3)]
H, W = 24, 32
CASES = 1000
_RLE_CHARS = "".join(chr(c) for c in range(48, 112))

_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40)
_u32 = st.integers(0, 2**32 - 1)
_stamp_ns = st.one_of(st.sampled_from(STAMPS), st.integers(0, 2**31 * 10**9 - 1))


@st.composite
def _time(draw):
    from builtin_interfaces.msg import Time

    ns = draw(_stamp_ns)
    return Time(sec=ns // 10**9, nanosec=ns % 10**9)


@st.composite
def _mask_image(draw):
    from sensor_msgs.msg import Image

    h, w = draw(st.integers(0, 40)), draw(st.integers(0, 40))
    enc = draw(st.sampled_from(["mono8", "8UC1", "rgb8", "16UC1", "", "weird"]))
    step = draw(st.one_of(st.just(w), st.integers(0, 100)))
    data = draw(st.one_of(st.binary(max_size=64), st.just(bytes(h * max(step, 0)))))
    return Image(height=h, width=w, encoding=enc, step=step, data=data)


@st.composite
def _region_mask(draw):
    from rynnec_ros.msg import RegionMask

    from rynnec_ros.core import masks as rle_codec

    kind = draw(st.sampled_from(["valid", "random", "image", "empty"]))
    m = RegionMask(stamp=draw(_time()))
    if kind == "valid":
        mask = np.zeros((H, W), bool)
        mask[draw(st.integers(0, H - 1)):, draw(st.integers(0, W - 1)):] = True
        rle = rle_codec.encode(mask)
        m.size, m.counts = rle["size"], rle["counts"]
    elif kind == "random":
        m.size = [draw(_u32), draw(_u32)] if draw(st.booleans()) else [H, W]
        m.counts = draw(st.one_of(_text, st.text(alphabet=_RLE_CHARS, max_size=30)))
    elif kind == "image":
        m.image = draw(_mask_image())
    return m


@st.composite
def _region(draw):
    from rynnec_ros.msg import Region

    return Region(object_id=draw(_u32), label=draw(_text), masks=draw(st.lists(_region_mask(), max_size=3)))


@st.composite
def _ask(draw):
    from rynnec_ros.srv import AskQuestion

    return AskQuestion.Request(
        question=draw(st.one_of(_text, st.just("What is <object0>?"), st.just("x" * 300))),
        regions=draw(st.lists(_region(), max_size=2)),
        options=draw(st.lists(_text, max_size=3)),
        task=draw(st.one_of(st.just(""), _text, st.just("distance_to_camera"))),
        frame_stamps=draw(st.lists(_time(), max_size=3)),
        window_start=draw(_time()),
        window_end=draw(_time()),
        max_frames=draw(st.one_of(st.just(0), _u32)),
        max_new_tokens=draw(st.integers(0, 1)),
    )


@st.composite
def _segment(draw):
    from rynnec_ros.srv import Segment

    return Segment.Request(
        expression=draw(st.one_of(_text, st.just("\x00bad"), st.just(""))),
        frame_stamps=draw(st.lists(_time(), max_size=2)),
        window_start=draw(_time()),
        window_end=draw(_time()),
        max_frames=draw(st.one_of(st.just(0), _u32)),
        object_id=draw(_u32),
    )


@pytest.fixture(scope="module")
def client(node_factory, segmenting_checkpoint):
    from rynnec_ros.ros.client import CognitionClient

    node = node_factory({
        "checkpoint": str(segmenting_checkpoint), "qos_reliability": "reliable", "qos_depth": 20,
        "ingest_fps": 0.0, "max_new_tokens": 1, "max_frames_per_query": 2, "max_question_chars": 200,
        "time_jump_back_s": 1e6,
    })
    with CognitionClient(client_name="test_fuzz_client") as c:
        assert c.wait_for_node(60.0), node.output()
        rng = np.random.default_rng(1)
        frames = [rng.integers(0, 256, (H, W, 3), dtype=np.uint8) for _ in STAMPS]
        c.publish_frames(frames, STAMPS)
        assert c.wait_for_frames(STAMPS, 15.0), f"{c.buffered_stamps()}\n{node.output()}"
        c.fuzz_node = node
        yield c


_seen = {"ok": 0, "failed": 0}


@settings(max_examples=CASES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.large_base_example])
@given(request=st.one_of(_ask(), _ask(), _ask(), _segment()))
def test_fuzzed_requests_are_answered_and_the_node_survives(client, request) -> None:
    from rynnec_ros.srv import AskQuestion

    cli = client._ask if isinstance(request, AskQuestion.Request) else client._segment
    res = client._call(cli, request, 60.0)
    if res.success:
        assert res.message == "" and isinstance(res.answer, str) and len(res.frame_stamps) >= 1
        _seen["ok"] += 1
    else:
        assert res.message.strip(), "a failed request must say why"
        assert not res.message.startswith("internal error"), res.message
        _seen["failed"] += 1


def test_node_alive_after_fuzzing(client) -> None:
    assert _seen["ok"] + _seen["failed"] >= CASES, _seen
    assert _seen["failed"] > 0
    assert client.fuzz_node.alive()
    ans = client.ask("Still alive?", frame_stamps_ns=STAMPS[:1], max_new_tokens=1)
    assert isinstance(ans.text, str)

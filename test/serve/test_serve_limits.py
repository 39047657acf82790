"""The site server's limits without a server: request bodies, region masks, uploads (docs/serving.md,
"Limits"). The mask codec's own checks are tested in test/test_masks.py."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core import wire
from rynnec_ros.core.types import Request
from rynnec_ros.serve import guard

from .conftest import asked, drain

# ------------------------------------------------------------------------------------ request bodies


def body(**fields: Any) -> bytes:
    doc = {"op": "answer", "question": "<video>\nq?", "keys": ["k0", "k1"], "regions": [], "options": None,
           "task": None, "max_new_tokens": 6, "stream": False}
    doc.update(fields)
    return json.dumps(doc).encode()


def full(h: int = 4, w: int = 5) -> dict[str, Any]:
    return {"size": [h, w], "counts": [0, h * w]}


def one(rle: dict[str, Any] | None = None, frame: int = 0, n: int = 1) -> list[dict[str, Any]]:
    """One region (object 0) with ``n`` copies of a mask on ``frame``."""
    mask = {"frame": frame, "rle": full() if rle is None else rle}
    return [{"object_id": 0, "masks": [mask] * n}]


def test_question_of_the_node_limit_passes_one_more_character_does_not() -> None:
    assert wire.decode_request(body(question="q" * wire.MAX_QUESTION_CHARS))["question"]
    with pytest.raises(ValueError, match="question has 4097 characters, more than the limit 4096"):
        wire.decode_request(body(question="q" * 4097))
    with pytest.raises(ValueError, match="question has 262144 characters"):
        wire.decode_request(body(question="q" * 262_144))


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"regions": [{"object_id": i, "masks": [{"frame": 0, "rle": full()}]} for i in range(65)]},
         "65 regions, at most 64"),
        ({"regions": one(n=65)}, "65 masks, at most 64"),
        ({"regions": one(n=2)}, "two masks on frame 0"),
        ({"regions": one(frame=2)}, "frame 2, but the request"),
        ({"regions": [{"object_id": 0, "masks": [{"frame": 0}]}]}, "mask 0 must be an object with frame"),
        ({"regions": [{"label": "x", "masks": []}]}, "object_id must be an integer"),
        ({"regions": "everything"}, "regions must be a list"),
        ({"regions": [{"object_id": 0, "label": "l" * 4097, "masks": [{"frame": 0, "rle": full()}]}]},
         "region 0 label has 4097 characters"),
        ({"options": ["a"] * 65}, "65 options, at most 64"),
        ({"options": ["a", "b" * 4097]}, "option 1 has 4097 characters"),
        ({"options": "a"}, "options must be a list"),
        ({"task": 7}, "task must be a string"),
        ({"max_new_tokens": 8193}, "outside 0..8192"),
        ({"max_new_tokens": "3"}, "must be an integer"),
        ({"max_new_tokens": True}, "must be an integer"),
        ({"keys": []}, "non-empty list"),
        ({"keys": [1]}, r"keys\[0\] must be a non-empty string"),
        ({"keys": ["a", "a"]}, "unique"),
        ({"keys": ["k" * 1025]}, "1025 characters"),
        ({"keys": [f"k{i}" for i in range(1001)]}, "1001 frames, more than the limit 1000"),
        ({"stream": "yes"}, "stream must be true or false"),
        ({"op": "rm"}, "op must be one of"),
        ({"question": None}, "question must be a string"),
    ],
)
def test_request_fields_over_the_limits_or_of_the_wrong_type_are_named(
    fields: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        wire.decode_request(body(**fields))


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (b"\xff\xfe\x00 not utf-8", "not UTF-8"),
        (b"{not json", "not JSON"),
        (b"[]", "must be a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply|not JSON"),
        (b" " * (wire.MAX_REQUEST_BYTES + 1), "more than the limit"),
    ],
)
def test_bodies_that_are_not_a_json_object_are_named(raw: bytes, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        wire.decode_request(raw)


def test_masks_are_checked_against_their_frames() -> None:
    doc = wire.decode_request(body(regions=[{"object_id": 3, "masks": [{"frame": 1, "rle": full(48, 64)}]}]))
    (region,) = wire.regions_from_wire(doc["regions"], [(48, 64), (48, 64)])
    assert region.object_id == 3 and list(region.masks) == [1] and region.masks[1].all()
    with pytest.raises(ValueError, match=r"region 0 mask 0 \(frame 1\): mask RLE size 48×64 is not its"):
        wire.regions_from_wire(doc["regions"], [(48, 64), (24, 32)])


def test_all_masks_of_a_request_share_one_pixel_budget() -> None:
    side = 1 << 13  # 64 Mi pixels per mask, 5 masks: over the 256 Mi budget of MAX_MASK_PIXELS
    rle = {"size": [side, side], "counts": [side * side]}
    regions = [{"object_id": 0, "masks": [{"frame": i, "rle": rle} for i in range(5)]}]
    with pytest.raises(ValueError, match="add up to 335544320 pixels"):
        wire.regions_from_wire(regions, max_pixels=None)


def test_the_client_refuses_what_the_server_would() -> None:
    frames: list[Any] = []
    with pytest.raises(ValueError, match="question has 5000 characters"):
        wire.encode_request("answer", Request("q" * 5000, frames=frames), ["k"], stream=False)


# ------------------------------------------------------------------------------------------ uploads


def check(keys: list[bytes], shape: tuple[int, ...], max_bytes: int = wire.MAX_UPLOAD_BYTES) -> str | None:
    rgb = np.broadcast_to(np.zeros((1,) * (len(shape) - 1) + (shape[-1],), np.uint8), shape)  # no allocation
    return guard.check_upload(np.array(keys, dtype=object), rgb, wire.MAX_IMAGE_PIXELS, 1000, 1024, max_bytes)


@pytest.mark.parametrize(
    ("keys", "shape", "match"),
    [
        ([b"a"], (1, 0, 0, 3), "0×0 pixels"),
        ([b"a"], (1, 4, 0, 3), "4×0 pixels"),
        ([], (0, 4, 4, 3), "no keys"),
        ([b"a", b"b"], (1, 4, 4, 3), "2 keys for 1 frames"),
        ([b"\xff\xfe\x00garbage"], (1, 4, 4, 3), r"keys\[0\] is not UTF-8"),
        ([b""], (1, 4, 4, 3), r"keys\[0\] is empty"),
        ([b"a", b"a"], (2, 4, 4, 3), "unique"),
        ([b"a"], (4, 4, 3), "N×H×W×3"),
        ([b"a"], (1, 4, 4, 4), "N×H×W×3"),
        ([b"a"], (1, 2161, 3840, 3), "8298240 pixels, more than the limit 8294400"),
    ],
)
def test_bad_uploads_get_a_reason_naming_the_input(
    keys: list[bytes], shape: tuple[int, ...], match: str
) -> None:
    reason = check(keys, shape)
    assert reason is not None and reason.startswith("rynnec_frames: ")
    assert re.search(match, reason), reason


def test_a_good_upload_passes() -> None:
    assert check([b"robot:1", "ключ".encode()], (2, 48, 64, 3)) is None


def test_an_upload_is_bounded_in_bytes() -> None:
    """1080p rgb8 is 1920·1080·3 = 6,220,800 bytes a frame (worked by hand): 10 frames are 62,208,000 bytes,
    inside 64 MiB = 67,108,864; 11 frames are 68,428,800, over it."""
    keys = [f"k{i}".encode() for i in range(11)]
    assert check(keys[:10], (10, 1080, 1920, 3), max_bytes=64 << 20) is None
    reason = check(keys, (11, 1080, 1920, 3), max_bytes=64 << 20)
    assert reason is not None and "68428800 bytes in one upload, more than the limit 67108864" in reason


def test_the_frame_store_is_bounded_in_frames_and_in_bytes() -> None:
    """Least recently used first out, by count and by bytes (expected keys worked by hand from that rule)."""
    from rynnec_ros.serve.server import FrameStore

    frame = np.zeros((10, 10, 3), np.uint8)  # 300 bytes
    store = FrameStore(capacity=3, max_bytes=1000)
    for k in "abc":
        store.put(k, frame)
    assert store.nbytes == 900
    assert store.get(["a"])[1] == []  # "a" is now the newest; "b" the oldest
    store.put("d", frame)  # 4 frames > 3: "b" goes
    assert store.get(["b"]) == ([], ["b"])
    store.put("e", np.zeros((20, 10, 3), np.uint8))  # 600 bytes: c, a, d, e = 1500 > 1000 -> c, a go
    assert store.get(["c"])[1] == ["c"] and store.get(["a"])[1] == ["a"]
    assert store.get(["d", "e"])[1] == [] and store.nbytes == 900
    with pytest.raises(ValueError, match="larger than the frame store"):
        store.put("f", np.zeros((40, 10, 3), np.uint8))


def test_the_server_refuses_upload_limits_robots_would_break() -> None:
    from rynnec_ros.serve.server import FrameStore, RynnECModels

    with pytest.raises(ValueError, match="max_upload_bytes must be >= 67108864"):
        RynnECModels(object(), FrameStore(8), max_upload_bytes=32 << 20)
    with pytest.raises(ValueError, match="must hold one whole upload"):
        RynnECModels(object(), FrameStore(8, max_bytes=100 << 20), max_upload_bytes=128 << 20)


def test_one_line_keeps_what_went_wrong_not_where() -> None:
    text = (
        "Model execute error: Traceback (most recent call last):\n"
        '  File "/tmp/folderX/1/model.py", line 486, in execute\n'
        "    x = y()\n"
        "c_python_backend_utils.TritonModelException: Traceback (most recent call last):\n"
        '  File "/work/rynnec_ros/serve/server.py", line 1, in upload\n'
        "ValueError: rynnec_frames: keys[0] is empty\n\n\nAt:\n  /tmp/folderX/1/model.py(501): execute\n"
    )
    assert guard.one_line(RuntimeError(text)) == "ValueError: rynnec_frames: keys[0] is empty"


# --------------------------------------------------------------------- the ask model, no Triton, no model


class NoEngine:
    """An engine that must never be reached: every request below is refused before model work."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"engine.{name} used for a refused request")


def refused(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    from rynnec_ros.serve.server import FrameStore, RynnECModels

    store = FrameStore(8)
    store.put("k0", np.zeros((48, 64, 3), np.uint8))
    store.put("k1", np.zeros((48, 64, 3), np.uint8))
    return asked(RynnECModels(NoEngine(), store, batch_window_s=0), raw)


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        (body(question="q" * 65_536), "question has 65536 characters"),
        (body(regions=[{"object_id": i, "masks": [{"frame": 0, "rle": full(48, 64)}]} for i in range(3000)]),
         "3000 regions"),
        (body(regions=one({"size": [100000, 100000], "counts": [0, 10**10]})),
         "mask RLE size 100000×100000 is not its frame's 48×64"),
        (body(regions=one({"size": [48, 64], "counts": [3072]})), "empty"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_refused_questions_get_one_error_and_no_model_work(raw: bytes, match: str) -> None:
    (only,) = refused(raw)
    assert only[0] == "error" and match in only[1]["message"], only
    assert "Traceback" not in only[1]["message"]


class EndlessEngine:
    """Isolates the server's stop plumbing: decodes one token every 5 ms until ``should_stop`` says so
    (a real model that never emits EOS), then raises ``Cancelled`` as the engines do; one question at a
    time, as the engine's lock makes it."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self.tokens = 0
        self.lock = threading.Lock()

    def answer(self, request: Any, on_token: Any = None, should_stop: Any = None) -> Any:
        from rynnec_ros.core.types import Cancelled

        with self.lock:
            while not should_stop():
                self.tokens += 1
                if on_token is not None:
                    on_token("x")
                time.sleep(0.005)
            self.stopped.set()
            raise Cancelled()


def _endless_models(**kw: Any) -> tuple[EndlessEngine, Any]:
    from rynnec_ros.serve.server import FrameStore, RynnECModels

    store = FrameStore(8)
    store.put("k0", np.zeros((48, 64, 3), np.uint8))
    store.put("k1", np.zeros((48, 64, 3), np.uint8))
    engine = EndlessEngine()
    return engine, RynnECModels(engine, store, batch_window_s=0, **kw)


def _one(raw: bytes) -> list[dict[str, np.ndarray]]:
    return [{"request": np.array([raw], dtype=object)}]


def test_a_stream_nobody_reads_any_more_stops_its_decode() -> None:
    """PyTriton closes a decoupled model's generator when it cancels the request's task (shutdown, a
    response it cannot send); the engine (one question at a time) must not go on decoding for nobody."""
    engine, models = _endless_models()

    async def three_then_close() -> list[bytes]:
        stream = models.ask(_one(body(stream=True, max_new_tokens=512)))
        kinds = [(await anext(stream))[0]["kind"][0] for _ in range(3)]
        await stream.aclose()
        return kinds

    assert asyncio.run(three_then_close()) == [b"token"] * 3
    assert engine.stopped.wait(5.0), f"still decoding after the stream closed ({engine.tokens} tokens)"


def test_a_question_past_the_time_budget_ends_with_one_error() -> None:
    engine, models = _endless_models(max_request_s=0.3)
    out = asked(models, body(stream=True))
    assert engine.stopped.is_set()
    assert [k for k, _ in out[:-1]] == ["token"] * (len(out) - 1) and out[-1][0] == "error"
    assert "0.3 s limit (--max-request-s)" in out[-1][1]["message"]


def test_a_cancel_stops_its_question_and_is_answered_while_the_engine_is_busy() -> None:
    """docs/serving.md "Cancel": a cancel names the question by the id its client gave it, is answered with
    one ``cancelled`` response at once, and the question ends at once with one error saying it was
    cancelled, also one still waiting for the engine. The cancels must not wait behind the question in
    progress."""
    engine, models = _endless_models()

    async def scene() -> tuple[list[Any], ...]:
        first = asyncio.create_task(drain(models, body(stream=True, client="r1", id="q1")))
        while engine.tokens < 3:
            await asyncio.sleep(0.01)
        waiting = asyncio.create_task(drain(models, body(stream=True, client="r2", id="q1")))
        async with asyncio.timeout(5):  # read off the loop: wait until it is in flight, behind the first
            while len(models._flights) < 2:
                await asyncio.sleep(0.01)
        stray = await asyncio.wait_for(drain(models, wire.encode_cancel("q1", "r3")), 5)
        ack2 = await asyncio.wait_for(drain(models, wire.encode_cancel("q1", "r2")), 5)
        out2 = await asyncio.wait_for(waiting, 5)
        still_decoding = not engine.stopped.is_set()
        ack1 = await asyncio.wait_for(drain(models, wire.encode_cancel("q1", "r1")), 5)
        out1 = await asyncio.wait_for(first, 5)
        again = await asyncio.wait_for(drain(models, wire.encode_cancel("q1", "r1")), 5)
        return stray, ack2, out2, [still_decoding], ack1, out1, again

    stray, ack2, out2, (still_decoding,), ack1, out1, again = asyncio.run(scene())
    assert stray == [("cancelled", {"id": "q1", "found": False})]  # another client's id is not theirs
    assert ack1 == ack2 == [("cancelled", {"id": "q1", "found": True})]
    assert again == [("cancelled", {"id": "q1", "found": False})]  # ended: nothing left to cancel
    cancelled = ("error", {"type": "RuntimeError", "message": "cancelled by the client"})
    assert out2 == [cancelled] and still_decoding  # ended while the engine was busy with the first
    assert [k for k, _ in out1[:-1]] == ["token"] * (len(out1) - 1) and out1[-1] == cancelled


def test_a_client_past_its_questions_in_flight_is_refused_and_others_are_not() -> None:
    _, models = _endless_models(max_client_questions=2)

    async def admitted(n: int) -> None:  # each request is read off the loop: wait until it is in flight
        async with asyncio.timeout(5):
            while len(models._flights) < n:
                await asyncio.sleep(0.01)

    async def scene() -> tuple[list[Any], list[Any], list[Any]]:
        mine = []
        for i in range(2):
            mine.append(asyncio.create_task(drain(models, body(client="r1", id=f"q{i}"))))
            await admitted(i + 1)
        third = await asyncio.wait_for(drain(models, body(client="r1", id="q2")), 5)
        other = asyncio.create_task(drain(models, body(client="r2", id="q0")))
        await admitted(3)
        dup_out = await asyncio.wait_for(drain(models, body(client="r2", id="q0")), 5)
        for i in range(2):
            await drain(models, wire.encode_cancel(f"q{i}", "r1"))
        await asyncio.wait_for(asyncio.gather(*mine), 5)
        await drain(models, wire.encode_cancel("q0", "r2"))
        return third, dup_out, await asyncio.wait_for(other, 5)

    third, dup, other = asyncio.run(scene())
    assert third == [("error", {"type": "RuntimeError", "message": (
        "client 'r1' already has 2 questions in flight, the server's limit (--max-client-questions 2); "
        "ask again once one is answered")})]
    dup_message = "bad request: question id 'q0' is already in flight for this client"
    assert dup == [("error", {"type": "RuntimeError", "message": dup_message})]
    assert other[-1] == ("error", {"type": "RuntimeError", "message": "cancelled by the client"})


def test_the_time_budget_and_the_client_limit_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_request_s must be > 0"):
        _endless_models(max_request_s=0)
    with pytest.raises(ValueError, match="max_client_questions must be >= 1"):
        _endless_models(max_client_questions=0)

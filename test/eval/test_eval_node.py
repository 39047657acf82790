"""The --via-node adapter: masks → regions, stamps, and how node refusals are reported.

The recording client stands in for ``CognitionClient`` to isolate the adapter; the real client and
node are exercised in test_eval_e2e.py.
"""

from __future__ import annotations

import sys
import time
import types
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core.buffer import BufferLimits, FrameBuffer
from rynnec_ros.core.types import Answer, Frame, Region, Request
from rynnec_ros.eval.node import NodePredictor


class Recorder:
    def __init__(
        self, fail: str = "", times: int = 10**6, buffered: list[int] | None = None, listed: bool = True
    ) -> None:
        self.buffered = buffered or []
        self.listed = listed
        self.fail = fail
        self.times = times
        self.published: list[tuple[int, list[int]]] = []
        self.asked: list[dict] = []
        self.waited: list[list[int]] = []

    def buffered_stamps(self) -> list[int]:
        return list(self.buffered)

    def publish_frames(self, frames: list[np.ndarray], stamps_ns: list[int]) -> None:
        self.published.append((len(frames), stamps_ns))

    def wait_for_frames(self, stamps_ns: list[int], timeout_s: float) -> bool:
        self.waited.append(list(stamps_ns))
        return self.listed

    def ask(self, question: str, regions: object, **kw: object) -> Answer:
        if self.fail and self.times > 0:
            self.times -= 1
            raise RuntimeError(self.fail)
        self.asked.append({"question": question, "regions": regions, **kw})
        return Answer(text="ok")

    def segment(self, expression: str, **kw: object) -> Answer:
        self.asked.append({"expression": expression, **kw})
        return Answer(text="seg", masks=[None])


def test_adapter_stamps_and_arguments() -> None:
    rec = Recorder()
    node = NodePredictor(client=rec, timeout_s=5)
    frames = [Frame(rgb=np.zeros((4, 4, 3), np.uint8))] * 2
    region = Region(object_id=0, masks={1: np.ones((4, 4), bool)})
    node.answer(Request("What is <object0>?", frames, [region], max_new_tokens=8))
    node.segment(Request("the cup", frames))
    (n1, s1), (n2, s2) = rec.published
    assert n1 == n2 == 2
    t0 = s1[0]
    assert s1 == [t0, t0 + 10**9] and s2 == [t0 + 2 * 10**9, t0 + 3 * 10**9]  # 1 s apart, rising
    assert abs(t0 - time.time_ns()) < 60 * 10**9  # starts at the wall clock, not at a fixed origin
    assert rec.asked[0]["frame_stamps_ns"] == s1 and rec.asked[0]["max_new_tokens"] == 8
    assert rec.asked[0]["regions"] == [region]  # passed on as the request holds it
    assert rec.asked[1]["frame_stamps_ns"] == s2
    assert rec.waited == [s1, s2]  # each item asks only after its window is buffered
    with pytest.raises(ValueError, match="no option likelihoods"):
        node.score_options(Request("q", frames, options=["a"]))


def test_node_refusal_becomes_item_error() -> None:
    node = NodePredictor(client=Recorder(fail="question too long"))
    with pytest.raises(ValueError, match="the node refused the request: question too long"):
        node.answer(Request("q", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))]))


MISSING = "requested frame stamp 5 ns is not in the buffer (holds 1 frames, 1..1 ns)"


def test_request_that_overtook_its_frames_is_retried() -> None:
    rec = Recorder(fail=MISSING, times=2)
    node = NodePredictor(client=rec)
    node.retry_pause_s = 0.0
    assert node.answer(Request("q", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))])).text == "ok"
    # the item, then the item again before the third attempt (the second only waited)
    assert [n for n, _ in rec.published] == [1, 1]
    (_, first), (_, again) = rec.published
    assert again == [first[0] + 10**9]  # sent again under the next stamp, not its own
    assert rec.asked[0]["frame_stamps_ns"] == again


def test_frames_the_node_does_not_list_are_re_sent_at_the_first_retry() -> None:
    rec = Recorder(fail=MISSING, times=1, listed=False)
    node = NodePredictor(client=rec)
    node.retry_pause_s = 0.0
    assert node.answer(Request("q", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))])).text == "ok"
    assert [n for n, _ in rec.published] == [1, 1]  # sent, not listed after the refusal, sent again
    assert len(rec.waited) == 3  # after the first send, before the retry, after the re-send


def test_stamps_continue_after_what_a_previous_run_left() -> None:
    """A previous run's 1 s steps may be ahead of the wall clock; interleaving with them would make the
    node thin or hold back our frames (docs/ros.md: ingest_fps, time jumps)."""
    ahead = time.time_ns() + 600 * 10**9
    rec = Recorder(buffered=[ahead - 10**9, ahead])
    NodePredictor(client=rec).answer(Request("q", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))] * 2))
    assert rec.published[0][1] == [ahead + 10**9, ahead + 2 * 10**9]


def test_missing_frames_give_up_after_bounded_retries() -> None:
    rec = Recorder(fail=MISSING)
    node = NodePredictor(client=rec)
    node.retry_pause_s = 0.0
    with pytest.raises(ValueError, match="not in the buffer"):
        node.answer(Request("q", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))]))
    assert rec.times == 10**6 - 4  # one call and three retries


class BufferedNode(Recorder):
    """The node's side as its buffer sees it: published frames go into a real ``FrameBuffer`` with the
    node's default time-jump bounds (``time_jump_back_s`` 1.0, 3 frames to confirm; ros/params.py), the
    first frame of the first publish is lost on the way, and a question is refused while a frame it
    names is not buffered (the node's message, ros/messages.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = FrameBuffer(BufferLimits(jump_back_s=1.0, jump_confirm_frames=3))
        self.lost_first = False

    def buffered_stamps(self) -> list[int]:
        return self.buffer.stamps()

    def publish_frames(self, frames: list[np.ndarray], stamps_ns: list[int]) -> None:
        super().publish_frames(frames, stamps_ns)
        for rgb, stamp in zip(frames, stamps_ns, strict=True):
            if not self.lost_first:
                self.lost_first = True
                continue
            self.buffer.add(Frame(rgb=rgb, stamp_ns=stamp))

    def wait_for_frames(self, stamps_ns: list[int], timeout_s: float) -> bool:
        super().wait_for_frames(stamps_ns, timeout_s)
        return set(stamps_ns) <= set(self.buffer.stamps())

    def ask(self, question: str, regions: object, **kw: object) -> Answer:
        for stamp in kw["frame_stamps_ns"]:  # type: ignore[attr-defined]
            if self.buffer.get(stamp) is None:
                raise RuntimeError(f"region 0 mask 0: stamp {stamp} ns is not a buffered frame")
        return super().ask(question, regions, **kw)


def test_a_lost_first_frame_is_recovered_although_later_frames_are_buffered() -> None:
    """Jazzy CI: a new publisher's first frame was lost, the next two arrived, and re-sending the window
    under the same stamps never got the first in: 2 s behind the newest buffered frame it is a jump back
    (> 1 s) that the frames after it contradict, so the buffer drops it as a stray stamp each time."""
    rec = BufferedNode()
    node = NodePredictor(client=rec)
    node.retry_pause_s = 0.0
    frames = [Frame(rgb=np.full((4, 4, 3), k, np.uint8)) for k in range(3)]
    region = Region(object_id=0, masks={0: np.ones((4, 4), bool)})
    assert node.answer(Request("What is <object0>?", frames, [region])).text == "ok"
    (_, first), (_, again) = rec.published
    asked = rec.asked[0]["frame_stamps_ns"]
    assert asked == again and min(again) > max(first)
    assert [int(rec.buffer.get(s).rgb[0, 0, 0]) for s in asked] == [0, 1, 2]  # the item's own frames


def test_the_client_it_created_is_closed_and_a_given_one_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs (the e2e tests, notebooks) each built a ROS client and never closed it: its DDS
    participant, executor thread and camera publisher stayed (rcl warned "Publisher already registered
    for node name 'rynnec_client'" at the next run)."""
    made: list[Any] = []

    class Client(Recorder):
        def __init__(self, node_namespace: str) -> None:
            super().__init__()
            self.closed = 0
            made.append(self)

        def wait_for_node(self, timeout_s: float) -> bool:
            return True

        def close(self) -> None:
            self.closed += 1

    monkeypatch.setitem(sys.modules, "rynnec_ros.ros.client", types.SimpleNamespace(CognitionClient=Client))
    NodePredictor("ns").close()
    given = Client("ns")
    NodePredictor(client=given).close()
    assert [c.closed for c in made] == [1, 0]

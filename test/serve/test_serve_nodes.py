"""Three real robots: a site server process and three ``rynnec_node`` processes on ``backend: remote``.

One ``rynnec-ros serve`` (Triton) on loopback serves the tiny upstream-format checkpoint; three node
processes (``rynnec_r0..2``, each with its own colour topic) point at it. Each robot gets its own frames
over ROS; the three then ask interleaved AskQuestion / Segment calls (one thread per robot, all at
once). Every answer must equal what the local torch engine in this process gives for the same frames
and question: the same text, and for segmentation the same mask RLE per frame. Then the server is
SIGKILLed while the robots have a long question each (streaming, or queued behind another): every one
still pending then gets ``success=false`` naming the inference server (one that ended first is an
answer), at least one was pending, nothing hangs.
While the server is down a new question fails at once with the reason. Once the server is back on the
same port, the same nodes (not restarted) answer again, equal to the local engine.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from rynnec_ros.core.types import Answer, Frame, Region, Request

from ..model.conftest import CHECKPOINT, Case
from ..ros.conftest import NodeProcess
from .conftest import ServerProcess

pytest.importorskip("tritonclient.grpc")
pytestmark = pytest.mark.ros

ROBOTS = 3
NEW_TOKENS = 12
# The node's most. The tiny checkpoint does emit EOS: greedy decoding of the long question below ends
# after 714, 7540 and 3950 characters on the three robots' windows (local engine, 0.1-1.5 s here), so
# a robot's question may end before the kill; the last robot's still queues behind the others.
LONG_TOKENS = 8192
T0 = 20 * 10**9


def _frames(robot: int) -> list[np.ndarray]:
    """The fixture window, different per robot (reversed, rolled) so the answers tell the robots apart.

    The tiny random checkpoint emits [SEG] only for some windows and prompts: these three (with the
    segmentation prompt of ``_SEGMENT``) give real masks.
    """
    frames = Case("a1_video_qa_224x168").frames
    if robot == 1:
        return frames[::-1]
    if robot == 2:
        return [np.ascontiguousarray(np.roll(f, 17, axis=1)) for f in frames]
    return frames


_SEGMENT = ["a1_video_qa_224x168", "a1_video_qa_224x168", "c1_seg_224x168"]


def _regions() -> list[Region]:
    meta, masks = Case("b1_region_qa_224x168").meta, Case("b1_region_qa_224x168").masks
    assert masks is not None
    regions: dict[int, Region] = {}
    for mask, fi, obj in zip(masks, meta["mask_ids"], meta["mask_object_index"], strict=True):
        regions.setdefault(obj, Region(object_id=obj, masks={})).masks[fi] = mask
    return [regions[k] for k in sorted(regions)]


def _workload(robot: int) -> list[tuple[str, str, list[Region], slice]]:
    """(op, question, regions, frames used) asked by ``robot``, in this order."""
    return [
        ("ask", Case("a1_video_qa_224x168").meta["question"], [], slice(0, 3)),
        ("segment", Case(_SEGMENT[robot]).meta["question"], [], slice(0, 3)),
        ("ask", Case("b1_region_qa_224x168").meta["question"], _regions(), slice(0, 3)),
        ("ask", "<video>\nWhat changed between the frames?", [], slice(1, 3)),
    ]


def _rle(mask: np.ndarray | None) -> Any:
    from rynnec_ros.core import masks as rle_codec

    return None if mask is None else rle_codec.encode(np.asarray(mask, bool))


@pytest.fixture(scope="module")
def local_engine() -> Any:
    import torch

    from rynnec_ros.model.backends import load_engine

    torch.set_num_threads(1)
    return load_engine(CHECKPOINT, backend="torch")


def _expected(
    engine: Any,
    robot: int,
    op: str,
    question: str,
    regions: list[Region],
    used: slice,
    new_tokens: int = NEW_TOKENS,
) -> Answer:
    """The local engine's answer: frames without keys (hashed), a different code path from the node's."""
    window = [Frame(rgb=f) for f in _frames(robot)[used]]
    req = Request(question, window, regions, max_new_tokens=new_tokens)
    return engine.segment(req) if op == "segment" else engine.answer(req)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    server = ServerProcess(CHECKPOINT, tmp_path_factory.mktemp("site") / "server.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def robots(site: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Any]]:
    """Three nodes on backend remote, each with its own frames buffered; a client per node."""
    from rynnec_ros.ros.client import CognitionClient

    logs = tmp_path_factory.mktemp("robots")
    nodes = [
        NodeProcess(
            {
                "checkpoint": str(CHECKPOINT),  # required by configure; the server holds the weights
                "backend": "remote",
                "server_url": site.url,
                "server_request_timeout_s": 120.0,
                "color_topic": f"/r{i}/camera/color/image_raw",
                "qos_reliability": "reliable",
                "qos_depth": 20,
                "ingest_fps": 0.0,
                "sample_fps": 0.0,
                "max_new_tokens": NEW_TOKENS,
                "spatial_source": "model",
                "publish_overlay": False,
            },
            logs / f"node{i}.log",
            name=f"rynnec_r{i}",
        )
        for i in range(ROBOTS)
    ]
    clients: list[Any] = []
    try:
        for i in range(ROBOTS):
            c = CognitionClient(
                node_name=f"rynnec_r{i}",
                client_name=f"test_fleet_client{i}",
                color_topic=f"/r{i}/camera/color/image_raw",
            )
            clients.append(c)
        for node, c in zip(nodes, clients, strict=True):
            assert c.wait_for_node(120.0), node.output()
            assert "on backend remote" in node.output(), node.output()
        stamps = [T0 + k * 10**9 for k in range(3)]
        for i, c in enumerate(clients):
            c.publish_frames(_frames(i), stamps)
        for node, c in zip(nodes, clients, strict=True):
            assert c.wait_for_frames(stamps, 20.0), (c.buffered_stamps(), node.output())
        yield list(zip(nodes, clients, strict=True))
    finally:
        for c in clients:
            c.close()
        for node in nodes:
            node.stop()


def _call(client: Any, op: str, question: str, regions: list[Region], used: slice, **kw: Any) -> Answer:
    stamps = [T0 + k * 10**9 for k in range(3)][used]
    if op == "segment":
        return client.segment(question, frame_stamps_ns=stamps, object_id=1, **kw)
    return client.ask(question, regions, frame_stamps_ns=stamps, max_new_tokens=NEW_TOKENS, **kw)


def _check(got: Answer, want: Answer, op: str, what: str) -> None:
    assert got.text == want.text and got.text.strip(), what
    if op == "segment":
        assert want.masks is not None and got.masks is not None, what
        assert any(m is not None and 0.05 < m.mean() < 0.95 for m in want.masks), "real SAM2 masks"
        assert [_rle(m) for m in got.masks] == [_rle(m) for m in want.masks], what
        assert got.mask_scores == pytest.approx(want.mask_scores, abs=1e-4), what


@pytest.mark.timeout(900)
def test_three_nodes_interleaved_then_server_killed_and_back(
    robots: list[Any], site: Any, local_engine: Any
) -> None:
    work = [_workload(i) for i in range(ROBOTS)]
    want = {(i, k): _expected(local_engine, i, *w) for i in range(ROBOTS) for k, w in enumerate(work[i])}
    assert len({want[(i, 0)].text for i in range(ROBOTS)}) == ROBOTS, "the robots' windows differ"

    # -- interleaved: every robot runs the workload at once, so the server sees their requests mixed
    got: dict[tuple[int, int], Answer | BaseException] = {}
    order: list[int] = []
    lock = threading.Lock()

    def robot(i: int) -> None:
        _, client = robots[i]
        n = len(work[i])
        for j in range(n):
            k = (j + i) % n  # each robot starts at another point of the workload
            op, question, regions, used = work[i][k]
            try:
                ans: Answer | BaseException = _call(client, op, question, regions, used, timeout_s=180.0)
            except BaseException as exc:  # reported below with the node's log
                ans = exc
            with lock:
                got[(i, k)] = ans
                order.append(i)

    threads = [threading.Thread(target=robot, args=(i,), daemon=True) for i in range(ROBOTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a robot's call hung"
    for (i, k), ans in sorted(got.items()):
        node, _ = robots[i]
        assert isinstance(ans, Answer), f"robot {i} call {k}: {ans!r}\n{node.output()[-3000:]}"
        _check(ans, want[(i, k)], work[i][k][0], f"robot {i} call {k} ({work[i][k][0]})")
    assert len(got) == sum(len(w) for w in work)
    switches = sum(a != b for a, b in itertools.pairwise(order))
    assert switches > ROBOTS - 1, (
        "the robots' calls were served interleaved, not one robot after another",
        order,
    )

    # -- the server dies with a long question pending on every robot
    pieces = [0] * ROBOTS
    errors: list[BaseException | Answer | None] = [None] * ROBOTS
    q = "<video>\nTell me everything you see."
    stamps = [T0 + k * 10**9 for k in range(3)]

    def long_question(i: int) -> None:
        _, client = robots[i]

        def count(_: str) -> None:
            pieces[i] += 1

        try:  # the last robot on the AskQuestion service, the others on the streaming action
            if i == ROBOTS - 1:
                errors[i] = client.ask(q, frame_stamps_ns=stamps, max_new_tokens=LONG_TOKENS, timeout_s=300.0)
            else:
                errors[i] = client.ask_stream(
                    q, count, frame_stamps_ns=stamps, max_new_tokens=LONG_TOKENS, timeout_s=300.0
                )
        except BaseException as exc:
            errors[i] = exc

    threads = [threading.Thread(target=long_question, args=(i,), daemon=True) for i in range(ROBOTS)]
    for t in threads[:-1]:
        t.start()
    deadline = time.monotonic() + 120
    while sum(pieces) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sum(pieces) >= 5, "a long question streams from the server"
    # the last robot's question queues behind the streaming ones
    threads[-1].start()
    time.sleep(1.0)
    t_kill = time.monotonic()
    site.kill()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a pending request hung after the server died"
    assert time.monotonic() - t_kill < 60
    pending = 0
    for i, e in enumerate(errors):
        if isinstance(e, Answer):  # it ended (EOS) before the kill: a dead server answers nothing
            continue
        assert isinstance(e, RuntimeError), f"robot {i}: {e!r}"
        assert "inference server" in str(e), f"robot {i}: {e}"
        pending += 1
    assert pending, f"no question was still pending when the server died: {errors!r}"

    # -- a question while the server is down: refused at once, with the reason
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="inference server"):
        _call(robots[0][1], *work[0][0], timeout_s=60.0)
    assert time.monotonic() - t0 < 30

    # -- the server is back on the same port: the same nodes answer again (frames re-uploaded)
    site.start()
    for i, (node, client) in enumerate(robots):
        assert node.alive(), node.output()
        for k in (1, 3):
            _check(
                _call(client, *work[i][k], timeout_s=180.0),
                want[(i, k)],
                work[i][k][0],
                f"robot {i} call {k} after the restart",
            )

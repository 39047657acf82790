"""py_trees behaviours (rynnec_ros/ros/behaviours.py) on the client's non-blocking handles, ticked in real
trees against the real node in its own process (issue 23, item 2).

Expected outcomes come from py_trees' documented semantics (``update()`` decides RUNNING / SUCCESS /
FAILURE; ``stop(Status.INVALID)`` -- the tree halted, or a Selector switching to a higher-priority branch --
leaves a running behaviour INVALID), from action/Ask.action (the result is ``success: false`` with the
reason "also when cancelled"; a feedback message per generated piece), from action_msgs/GoalStatus as the
node's action servers publish it on ``~/ask_stream/_action/status`` and ``~/segment_stream/_action/status``
(STATUS_CANCELED: "canceled after an external request from an action client"; STATUS_ABORTED: "terminated
by the action server without an external request") and from action/Segment.action (one mask per frame used
that has a mask). The node's own view
of whether it is still busy is the ``queue`` stage of the next answer's timings: the time that request
waited for the node's one worker.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from .peer import Peer, publish_frames_until_listed

pytestmark = pytest.mark.ros

NAME = "rynnec_bt"
TOPIC = f"/{NAME}/camera"
H, W = 24, 32
STAMP_NS = 7 * 10**9
LONG = 8192  # tokens (the node's limit): the endless checkpoint generates ~1000/s here, several seconds
TERMINAL = (4, 5, 6)  # action_msgs/GoalStatus: SUCCEEDED, CANCELED, ABORTED
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class StatusWatch:
    """Every goal status the node's action server publishes (its status topic, transient-local)."""

    def __init__(self, peer: Peer, action: str = "ask_stream", node_name: str = NAME) -> None:
        from action_msgs.msg import GoalStatusArray
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        self._seen: dict[bytes, list[int]] = {}
        self._lock = threading.Lock()
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._sub = peer.node.create_subscription(GoalStatusArray, f"/{node_name}/{action}/_action/status",
                                                  self._on_status, qos)

    def _on_status(self, msg: Any) -> None:
        with self._lock:
            for s in msg.status_list:
                seen = self._seen.setdefault(bytes(s.goal_info.goal_id.uuid), [])
                if not seen or seen[-1] != s.status:
                    seen.append(int(s.status))

    def terminal(self, goal_id: bytes, timeout: float = 30.0) -> int | None:
        """The goal's terminal status as the node published it, or None when none came in ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                done = [s for s in self._seen.get(goal_id, []) if s in TERMINAL]
            if done:
                return done[-1]
            time.sleep(0.05)
        return None


@pytest.fixture(scope="module")
def peer():
    p = Peer("bt_test_peer")
    yield p
    p.close()


@pytest.fixture(scope="module")
def node(node_factory, endless_checkpoint, peer):
    """The node on the endless checkpoint (generates until max_new_tokens: short or long answers on
    demand, and [SEG] masks), holding one frame, with a long request_timeout_s so that only what a test
    sends ends its requests."""
    n = node_factory({"checkpoint": str(endless_checkpoint), "qos_reliability": "reliable",
                      "color_topic": TOPIC, "ingest_fps": 0.0, "max_frames_per_query": 1, "max_new_tokens": 4,
                      "request_timeout_s": 300.0}, name=NAME)
    why = publish_frames_until_listed(peer, n, NAME, TOPIC, [STAMP_NS], H, W)
    if why:
        pytest.fail(f"frame never buffered: {why}\n{n.output()[-3000:]}")
    yield n
    assert n.alive(), n.output()[-3000:]


@pytest.fixture(scope="module")
def watch(peer, node):
    return StatusWatch(peer)


@pytest.fixture(scope="module")
def segment_watch(peer, node):
    return StatusWatch(peer, "segment_stream")


@pytest.fixture(scope="module")
def client(node):
    from rynnec_ros.ros.client import CognitionClient

    with CognitionClient(node_name=NAME, color_topic=TOPIC, client_name="bt_test_client") as c:
        assert c.wait_for_node(60.0), node.output()[-3000:]
        yield c


@pytest.fixture(autouse=True)
def clean_blackboard():
    import py_trees

    yield
    py_trees.blackboard.Blackboard.clear()


def _tick(tree: Any, until: Any, timeout: float = 60.0, period: float = 0.05) -> bool:
    """Tick ``tree`` until ``until()`` holds (checked after each tick) or ``timeout``; whether it held."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tree.tick()
        if until():
            return True
        time.sleep(period)
    return False


def _generating(ask: Any) -> bool:
    """The Ask runs and the node has streamed at least one piece of its answer."""
    from py_trees.common import Status

    return ask.status == Status.RUNNING and ask.handle is not None and ask.handle.pieces >= 1


def _assert_node_free(client: Any, node: Any) -> None:
    """The next question is answered at once: the node's worker is not still busy with the last one."""
    ans = client.ask("Are you free now?", max_new_tokens=2, timeout_s=60)
    assert ans.text.strip(), ans
    # the rest of a LONG generation would be seconds of queue wait here
    assert ans.timings["queue"] < 2.0, (ans.timings, node.output()[-2000:])


def _example(name: str = "ask_tree") -> Any:
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_example_tree_asks_and_acts_on_the_answer(client, node) -> None:
    """examples/ask_tree.py's tree: wait for frames -> Ask -> act, ticked to SUCCESS."""
    import py_trees
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    example = _example()
    root = example.build_tree(client, "What is in front of the robot?", timeout_s=60.0, max_new_tokens=4)
    tree = py_trees.trees.BehaviourTree(root)
    assert _tick(tree, lambda: root.status != Status.RUNNING, 90.0), root.tip().feedback_message
    _wait, ask, act = root.children
    assert root.status == Status.SUCCESS, [(c.name, c.status, c.feedback_message) for c in root.children]
    answer = ask.answer
    assert answer is not None and answer.text.strip() and answer.source == "model", answer
    assert act.acted_on is answer and py_trees.blackboard.Blackboard.get(example.ANSWER_KEY) is answer
    assert ask.handle.frame_stamps_ns == [STAMP_NS]  # computed on the frame the node buffered
    assert ask.handle.status == GoalStatus.STATUS_SUCCEEDED


def test_ask_about_a_frame_the_node_does_not_hold_fails_with_the_reason(client, node) -> None:
    import py_trees
    from py_trees.common import Status

    from rynnec_ros.ros.behaviours import Ask

    off = STAMP_NS + 10**10  # 10 s from the one frame, far beyond the node's stamp tolerance
    ask = Ask("ask", client, "What is this?", frame_stamps_ns=[off], timeout_s=60.0, blackboard_key="/never")
    tree = py_trees.trees.BehaviourTree(py_trees.composites.Sequence("plan", memory=True, children=[ask]))
    assert _tick(tree, lambda: ask.status != Status.RUNNING, 60.0)
    assert ask.status == Status.FAILURE and ask.answer is None
    reply = ask.handle.response
    assert reply is not None and not reply.success and reply.message
    assert reply.message in ask.feedback_message  # the node's reason reaches the tree
    with pytest.raises(KeyError):
        py_trees.blackboard.Blackboard.get("/never")


def test_halting_the_tree_cancels_the_question_and_frees_the_node(client, node, watch) -> None:
    import py_trees
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    from rynnec_ros.ros.behaviours import Ask

    ask = Ask("describe", client, "Describe everything in detail.", max_new_tokens=LONG, timeout_s=120.0)
    root = py_trees.composites.Sequence("plan", memory=True, children=[ask])
    tree = py_trees.trees.BehaviourTree(root)
    assert _tick(tree, lambda: _generating(ask), 60.0), (ask.status, ask.feedback_message)
    tree.root.stop(Status.INVALID)  # halt the whole tree mid-request
    assert ask.status == Status.INVALID and root.status == Status.INVALID
    goal = ask.handle.goal_id
    assert goal is not None
    assert watch.terminal(goal) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
    assert ask.handle.wait(30.0)
    reply = ask.handle.response
    assert reply is not None and not reply.success and "cancel" in reply.message, reply
    stopped_at = ask.handle.pieces
    assert stopped_at < LONG // 2, f"the node generated {stopped_at} of {LONG} pieces after the halt"
    time.sleep(1.0)
    assert ask.handle.pieces == stopped_at  # no feedback after the result: generation ended
    _assert_node_free(client, node)


def test_a_higher_priority_branch_preempts_the_question_and_cancels_it(client, node, watch) -> None:
    """A Selector switching to a higher-priority branch stops the running lower one with INVALID."""
    import operator

    import py_trees
    from action_msgs.msg import GoalStatus
    from py_trees.common import Access, ComparisonExpression, Status

    from rynnec_ros.ros.behaviours import Ask

    guard = py_trees.behaviours.CheckBlackboardVariableValue(
        "stop requested?", ComparisonExpression(variable="/stop_requested", value=True, operator=operator.eq))
    ask = Ask("describe", client, "Describe everything in detail.", max_new_tokens=LONG, timeout_s=120.0)
    root = py_trees.composites.Selector("priorities", memory=False, children=[guard, ask])
    tree = py_trees.trees.BehaviourTree(root)
    assert _tick(tree, lambda: _generating(ask), 60.0), (ask.status, ask.feedback_message)
    board = py_trees.blackboard.Client(name="operator")
    board.register_key(key="/stop_requested", access=Access.WRITE)
    board.set("/stop_requested", True)
    tree.tick()
    assert guard.status == Status.SUCCESS and root.status == Status.SUCCESS
    assert ask.status == Status.INVALID
    assert watch.terminal(ask.handle.goal_id) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
    assert ask.handle.wait(30.0) and ask.handle.pieces < LONG // 2
    _assert_node_free(client, node)


def test_the_handles_own_timeout_cancels_the_goal(client, node, watch) -> None:
    """Nobody polls the handle: its timeout alone cancels the goal (the client's timer)."""
    from concurrent.futures import InvalidStateError

    from action_msgs.msg import GoalStatus

    timeout = 2.0
    sent = time.monotonic()
    handle = client.ask_async("Describe everything in detail.", max_new_tokens=LONG, timeout_s=timeout)
    with pytest.raises(InvalidStateError):
        handle.result()  # in flight
    deadline = time.monotonic() + 30.0
    while handle.goal_id is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert handle.goal_id is not None, "the goal was never accepted"
    # CANCELED is a client's request; the node's own deadline would have ABORTED it.
    assert watch.terminal(handle.goal_id) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
    assert time.monotonic() - sent >= timeout  # not before its time
    assert handle.is_done()
    with pytest.raises(TimeoutError):
        handle.result()
    deadline = time.monotonic() + 30.0
    while handle.response is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert handle.response is not None and not handle.response.success
    assert "cancel" in handle.response.message, handle.response.message
    _assert_node_free(client, node)


def test_ask_behaviour_fails_at_its_timeout_and_the_goal_is_cancelled(client, node, watch) -> None:
    import py_trees
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    from rynnec_ros.ros.behaviours import Ask

    ask = Ask("describe", client, "Describe everything in detail.", max_new_tokens=LONG, timeout_s=2.0)
    tree = py_trees.trees.BehaviourTree(py_trees.composites.Sequence("plan", memory=True, children=[ask]))
    assert _tick(tree, lambda: ask.status != Status.RUNNING, 60.0)
    assert ask.status == Status.FAILURE and ask.answer is None, ask.feedback_message
    with pytest.raises(TimeoutError):
        ask.handle.result()
    assert watch.terminal(ask.handle.goal_id) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
    _assert_node_free(client, node)


def test_segment_then_ask_about_the_segmented_object(client, node) -> None:
    """Segment to SUCCESS with a mask on the frame; an Ask about <object0> takes it from the blackboard."""
    import py_trees
    from py_trees.common import Access, Status

    from rynnec_ros.core.types import Region
    from rynnec_ros.ros.behaviours import Ask, Segment

    seg = Segment("find the thing", client, "the thing", frame_stamps_ns=[STAMP_NS], object_id=3,
                  timeout_s=60.0, blackboard_key="/thing")
    board = py_trees.blackboard.Client(name="reader")
    board.register_key(key="/thing", access=Access.READ)

    def regions() -> dict[str, Any]:
        thing = board.get("/thing")
        return {"regions": [Region(object_id=3, label="thing", masks={0: thing.masks[0]})],
                "frame_stamps_ns": seg.handle.frame_stamps_ns}

    ask = Ask("ask about it", client, "What is <object0> used for?", max_new_tokens=4, timeout_s=60.0,
              inputs=regions)
    root = py_trees.composites.Sequence("plan", memory=True, children=[seg, ask])
    tree = py_trees.trees.BehaviourTree(root)
    assert _tick(tree, lambda: root.status != Status.RUNNING, 90.0), root.tip().feedback_message
    assert root.status == Status.SUCCESS, [(c.name, c.status, c.feedback_message) for c in root.children]
    found = seg.answer
    assert found is not None and board.get("/thing") is found
    assert seg.handle.frame_stamps_ns == [STAMP_NS] and found.object_ids == [3]
    assert found.masks is not None and len(found.masks) == 1  # one frame used
    mask = found.masks[0]
    assert isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == (H, W) and mask.any()
    assert ask.answer is not None and ask.answer.text.strip() and ask.answer.object_ids == [3]
    assert ask.handle.frame_stamps_ns == [STAMP_NS]


def test_halting_a_segment_cancels_its_goal_and_frees_the_node(client, node, segment_watch) -> None:
    """A Segment halted while the model decodes: its ~/segment_stream goal ends CANCELED and the node's
    worker is free at once. A segmentation has no per-request token limit, so the node's max_new_tokens
    is raised to LONG for this test (a live parameter) to make it run for seconds."""
    import py_trees
    from action_msgs.msg import GoalStatus
    from py_trees.common import Status

    from rynnec_ros.ros.behaviours import Segment

    assert client.set_parameters({"max_new_tokens": LONG}) == [""]
    try:
        seg = Segment("find it", client, "the thing", frame_stamps_ns=[STAMP_NS], timeout_s=120.0)
        tree = py_trees.trees.BehaviourTree(py_trees.composites.Sequence("plan", memory=True, children=[seg]))
        assert _tick(tree, lambda: seg.handle is not None and seg.handle.pieces >= 1, 60.0), \
            (seg.status, seg.feedback_message, node.output()[-2000:])
        assert seg.status == Status.RUNNING and seg.feedback_message.startswith("generating")
        tree.root.stop(Status.INVALID)
        assert seg.status == Status.INVALID
        assert segment_watch.terminal(seg.handle.goal_id) == GoalStatus.STATUS_CANCELED, node.output()[-2000:]
        assert seg.handle.wait(30.0)
        reply = seg.handle.response
        assert reply is not None and not reply.success and "cancel" in reply.message, reply
        assert seg.handle.pieces < LONG // 2, f"the node decoded {seg.handle.pieces} of {LONG} pieces"
    finally:
        assert client.set_parameters({"max_new_tokens": 4}) == [""]
    _assert_node_free(client, node)


def test_planner_example_acts_when_sure_and_asks_a_human_when_not(client, node) -> None:
    """examples/ask_or_escalate.py against the node: at threshold 0 the first answer is acted on; at a
    threshold no random-weight model reaches (its token probabilities are far below 1) the planner asks
    again (retries + 1 answers from the node) and then hands the question to a human with the best one.
    Confidence as docs/ros.md defines it: exp(mean_token_logprob) of the response for a free answer, the
    chosen option's probability for a choice."""
    import math

    example = _example("ask_or_escalate")
    sure = example.decide(client, "What is on the table?", threshold=0.0, max_new_tokens=4)
    assert sure.act and len(sure.attempts) == 1 and sure.answer is sure.attempts[0], sure
    assert sure.answer.confidence == pytest.approx(math.exp(client.last_response.mean_token_logprob))

    unsure = example.decide(client, "What is on the table?", threshold=0.999999, retries=1, max_new_tokens=4)
    assert not unsure.act and len(unsure.attempts) == 2, unsure
    assert all(a.confidence is not None and a.confidence < 0.999999 for a in unsure.attempts)
    assert unsure.answer.confidence == max(a.confidence for a in unsure.attempts)
    assert "stayed below" in unsure.why

    choice = example.decide(client, "Is it red?", options=["yes", "no"], threshold=0.0)
    probs = list(client.last_response.option_probabilities)
    assert choice.act and choice.answer.confidence == max(probs) and choice.answer.text in ("yes", "no")

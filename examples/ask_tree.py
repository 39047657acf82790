"""A behaviour tree that asks the cognition node about the scene and acts on the answer.

    wait for frames  ->  ask (~/ask_stream, RUNNING while it generates)  ->  act on the answer

Run it against a running node with camera frames, e.g. in three shells (``. scripts/env.sh`` in each):

    rynnec-ros node -p checkpoint:=/models/RynnEC-2B -p qos_reliability:=reliable
    rynnec-ros replay out/demo/scene --loop          # or a camera driver on /camera/color/image_raw
    python examples/ask_tree.py --question "What is on the table?"

Ctrl-C halts the tree: the running Ask is stopped with Status.INVALID and cancels its goal, so the node
stops generating for a planner that has gone. Exit code 0 when the tree succeeded.
"""

from __future__ import annotations

import argparse
import sys
import time

import py_trees
from py_trees.common import Access, Status

from rynnec_ros.core.types import Answer
from rynnec_ros.ros.behaviours import Ask
from rynnec_ros.ros.client import CognitionClient

ANSWER_KEY = "/scene_answer"


class WaitForFrames(py_trees.behaviour.Behaviour):
    """RUNNING until the node has buffered a camera frame (~/list_frames answers at once, no model)."""

    def __init__(self, client: CognitionClient) -> None:
        super().__init__("wait for frames")
        self.client = client

    def update(self) -> Status:
        try:
            stamps = self.client.buffered_stamps(timeout_s=2.0)
        except (TimeoutError, RuntimeError) as exc:
            self.feedback_message = f"no reply from the node: {exc}"
            return Status.RUNNING
        self.feedback_message = f"{len(stamps)} frames buffered"
        return Status.SUCCESS if stamps else Status.RUNNING


class ActOnAnswer(py_trees.behaviour.Behaviour):
    """Stands for the robot's next step: reads the answer the Ask wrote to the blackboard."""

    def __init__(self) -> None:
        super().__init__("act on the answer")
        self.board = self.attach_blackboard_client(name=self.name)
        self.board.register_key(key=ANSWER_KEY, access=Access.READ)
        self.acted_on: Answer | None = None

    def update(self) -> Status:
        answer: Answer = self.board.get(ANSWER_KEY)
        self.acted_on = answer
        print(f"the node says: {answer.text!r} (source {answer.source})")
        return Status.SUCCESS if answer.text.strip() else Status.FAILURE


def build_tree(client: CognitionClient, question: str, timeout_s: float = 60.0,
               max_new_tokens: int = 0) -> py_trees.composites.Sequence:
    ask = Ask("ask", client, question, timeout_s=timeout_s, max_new_tokens=max_new_tokens,
              blackboard_key=ANSWER_KEY)
    return py_trees.composites.Sequence("ask about the scene", memory=True,
                                        children=[WaitForFrames(client), ask, ActOnAnswer()])


def tick_until_done(tree: py_trees.trees.BehaviourTree, timeout_s: float, period_s: float = 0.1) -> Status:
    """Tick until the root leaves RUNNING or ``timeout_s`` passes; halts the tree (cancelling what runs)
    on the timeout or Ctrl-C."""
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            tree.tick()
            if tree.root.status != Status.RUNNING or time.monotonic() > deadline:
                break
            time.sleep(period_s)
    except KeyboardInterrupt:
        pass
    if tree.root.status == Status.RUNNING:
        tree.root.stop(Status.INVALID)
    return tree.root.status


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--question", default="What is in front of the robot?")
    ap.add_argument("--namespace", default="", help="the node's namespace")
    ap.add_argument("--node-name", default="rynnec")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole tree")
    args = ap.parse_args(argv)
    with CognitionClient(node_namespace=args.namespace, node_name=args.node_name,
                         client_name="ask_tree_example") as client:
        if not client.wait_for_node(60.0):
            print("the cognition node is not active", file=sys.stderr)
            return 2
        tree = py_trees.trees.BehaviourTree(build_tree(client, args.question, timeout_s=args.timeout))
        status = tick_until_done(tree, args.timeout)
        print(py_trees.display.unicode_tree(tree.root, show_status=True))
        return 0 if status == Status.SUCCESS else 1


if __name__ == "__main__":
    sys.exit(main())

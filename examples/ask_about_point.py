"""A behaviour tree that waits for a 3D point, asks the cognition node about the object there, and acts.

    wait for a point (PointStamped)  ->  ask about the point (AskAboutPoint, ~/ask_stream)  ->  act

The point comes from a topic: RViz's Publish Point tool (``/clicked_point``), Foxglove's 3D panel's
publish-point tool, or a planner's own target. The node moves it into its ``world_frame`` through TF, clicks
it on the frames whose depth shows it, segments the object there with SAM 2 and answers about it. Run it
against a node with depth, camera_info and TF, e.g. in three shells (``. scripts/env.sh`` in each):

    rynnec-ros node -p checkpoint:=/models/RynnEC-2B -p qos_reliability:=reliable \\
        -p depth_topic:=/camera/depth/image_raw -p camera_info_topic:=/camera/color/camera_info \\
        -p world_frame:=odom
    rynnec-ros replay out/demo/scene --loop
    python examples/ask_about_point.py --topic /target_point --question "What is <object0>?"

and publish a point (or click one in RViz with Publish Point publishing on that topic). Leave the node's
own ``point_prompt_topic`` off for that topic, or the node answers the same point twice. Ctrl-C halts the
tree: a running AskAboutPoint cancels its goal. Exit code 0 when the tree succeeded.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import py_trees
from geometry_msgs.msg import PointStamped
from py_trees.common import Access, Status

from rynnec_ros.core.types import Answer, WorldPoint
from rynnec_ros.ros.behaviours import AskAboutPoint
from rynnec_ros.ros.client import CognitionClient
from rynnec_ros.ros.convert import stamp_to_ns

POINT_KEY = "/target_point"
ANSWER_KEY = "/point_answer"


class WaitForPoint(py_trees.behaviour.Behaviour):
    """RUNNING until a point arrives on ``topic`` (subscribed on the client's node, so it needs no
    spinning of its own); then SUCCESS with the newest point on the blackboard as a ``WorldPoint``."""

    def __init__(self, client: CognitionClient, topic: str) -> None:
        super().__init__("wait for a point")
        self._latest: WorldPoint | None = None
        self._sub = client.node.create_subscription(PointStamped, topic, self._on_point, 10)
        self.board = self.attach_blackboard_client(name=self.name)
        self.board.register_key(key=POINT_KEY, access=Access.WRITE)

    def _on_point(self, msg: PointStamped) -> None:
        p = msg.point
        self._latest = WorldPoint((p.x, p.y, p.z), msg.header.frame_id, stamp_to_ns(msg.header.stamp))

    def initialise(self) -> None:
        self._latest = None  # a new run waits for a new point

    def update(self) -> Status:
        point = self._latest
        if point is None:
            self.feedback_message = "no point yet"
            return Status.RUNNING
        self.board.set(POINT_KEY, point, overwrite=True)
        self.feedback_message = f"point {point.xyz} in {point.frame_id!r}"
        return Status.SUCCESS


class ActOnAnswer(py_trees.behaviour.Behaviour):
    """Stands for the robot's next step: reads the answer about the point from the blackboard."""

    def __init__(self) -> None:
        super().__init__("act on the answer")
        self.board = self.attach_blackboard_client(name=self.name)
        self.board.register_key(key=ANSWER_KEY, access=Access.READ)
        self.acted_on: Answer | None = None

    def update(self) -> Status:
        answer: Answer = self.board.get(ANSWER_KEY)
        self.acted_on = answer
        frames = sorted(answer.prompted[0].masks) if answer.prompted else []
        print(f"the node says: {answer.text!r} (the object's masks on frames {frames})")
        return Status.SUCCESS if answer.text.strip() else Status.FAILURE


def build_tree(client: CognitionClient, question: str, topic: str, timeout_s: float = 60.0,
               max_new_tokens: int = 0) -> py_trees.composites.Sequence:
    reader = py_trees.blackboard.Client(name="point reader")
    reader.register_key(key=POINT_KEY, access=Access.READ)

    def the_point() -> dict[str, Any]:
        return {"point": reader.get(POINT_KEY)}

    ask = AskAboutPoint("ask about the point", client, question, label="target", timeout_s=timeout_s,
                        max_new_tokens=max_new_tokens, blackboard_key=ANSWER_KEY, inputs=the_point)
    return py_trees.composites.Sequence("ask about a point", memory=True,
                                        children=[WaitForPoint(client, topic), ask, ActOnAnswer()])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--question", default="What is <object0>?")
    ap.add_argument("--topic", default="/target_point", help="geometry_msgs/PointStamped topic")
    ap.add_argument("--namespace", default="", help="the node's namespace")
    ap.add_argument("--node-name", default="rynnec")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole tree")
    args = ap.parse_args(argv)
    with CognitionClient(node_namespace=args.namespace, node_name=args.node_name,
                         client_name="ask_about_point_example") as client:
        if not client.wait_for_node(60.0):
            print("the cognition node is not active", file=sys.stderr)
            return 2
        tree = py_trees.trees.BehaviourTree(build_tree(client, args.question, args.topic))
        deadline = time.monotonic() + args.timeout
        try:
            while tree.root.status in (Status.RUNNING, Status.INVALID) and time.monotonic() < deadline:
                tree.tick()
                time.sleep(0.1)
        except KeyboardInterrupt:
            pass
        if tree.root.status == Status.RUNNING:
            tree.root.stop(Status.INVALID)  # halts the running AskAboutPoint: its goal is cancelled
        print(py_trees.display.unicode_tree(tree.root, show_status=True))
        return 0 if tree.root.status == Status.SUCCESS else 1


if __name__ == "__main__":
    sys.exit(main())

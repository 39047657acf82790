"""SerialActionClient (rynnec_ros/ros/client.py): a goal's reply is never lost between the thread that
sends the goal and the executor thread that takes the reply.

The failure it prevents, from rclpy's sources: Jazzy's ``ActionClient.send_goal_async`` (rclpy 7.1.6,
``rclpy/action/client.py``) calls ``send_goal_request`` and only afterwards stores the sequence number in
``_pending_goal_requests``; its ``execute`` drops a reply whose sequence number is not stored yet
("Ignoring unexpected goal response"), and that goal's future never completes. Kilted's (9.1.2) holds one
lock over send-and-store and over every take. Here the send is held open on purpose -- the request is
on the wire, the sequence number not yet returned -- until the executor has had time to take the reply:
the reply then must still complete the future. (With rclpy's plain ActionClient on Jazzy this test's
goal gets no reply; measured by hand while writing it, not asserted, since it depends on timing.)
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from .peer import wait

pytestmark = pytest.mark.ros

HOLD_S = 1.0  # how long the send stays open after the reply was taken (or after the send, if never)


class _HeldSend:
    """The rclpy C handle of an action client, with ``send_goal_request`` held open: it sends, then waits
    until the goal's reply has been taken (or ``HOLD_S`` more when a lock keeps the executor out)."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.taken = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __enter__(self) -> Any:
        return self._real.__enter__()

    def __exit__(self, *exc: object) -> Any:
        return self._real.__exit__(*exc)

    def send_goal_request(self, request: Any) -> Any:
        seq = self._real.send_goal_request(request)
        self.taken.wait(HOLD_S * 3)
        time.sleep(HOLD_S)  # the executor's worker runs the reply's execute meanwhile
        return seq

    def take_goal_response(self, kind: Any) -> Any:
        out = self._real.take_goal_response(kind)
        if out[0] is not None:
            self.taken.set()
        return out


def test_goal_reply_taken_while_the_send_is_open_still_completes() -> None:
    import rclpy
    from rclpy.action import ActionServer, GoalResponse
    from rclpy.executors import MultiThreadedExecutor
    from rynnec_ros.action import Ask

    from rynnec_ros.ros.client import SerialActionClient

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    server_node = rclpy.create_node("race_server", context=ctx)
    client_node = rclpy.create_node("race_client", context=ctx)

    def execute(handle: Any) -> Any:
        handle.succeed()
        return Ask.Result(success=True, answer="ok")

    server = ActionServer(server_node, Ask, "/race/ask", execute_callback=execute,
                          goal_callback=lambda _goal: GoalResponse.ACCEPT)
    client = SerialActionClient(client_node, Ask, "/race/ask")
    ex = MultiThreadedExecutor(num_threads=4, context=ctx)
    ex.add_node(server_node)
    ex.add_node(client_node)
    spin = threading.Thread(target=ex.spin, daemon=True)
    spin.start()
    try:
        assert client.wait_for_server(timeout_sec=30.0)
        held = _HeldSend(client._client_handle)
        client._client_handle = held
        sent = client.send_goal_async(Ask.Goal(question="what is on the table?"))
        assert wait(sent, 30.0), "the goal's reply was lost between send and take"
        handle = sent.result()
        assert handle.accepted
        result = handle.get_result_async()
        assert wait(result, 30.0)
        assert result.result().result.answer == "ok"
        client._client_handle = held._real
    finally:
        ex.shutdown(timeout_sec=5)
        server.destroy()
        client.destroy()
        server_node.destroy_node()
        client_node.destroy_node()
        rclpy.shutdown(context=ctx)

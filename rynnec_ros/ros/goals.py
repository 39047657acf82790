"""The ~/ask_stream and ~/segment_stream actions: goals queued like service requests, streamed,
cancellable, never lost.

A goal is accepted only while the node is active and the job queue has room (otherwise the client sees
``accepted=False`` at once); an accepted goal that cannot become a Request (a region naming an unbuffered
frame, an option list over the limit) is aborted with the reason before it takes a queue slot.
Accepted goals wait in the job queue without an executor thread; when the worker is done, ``execute()``
schedules the terminal step (succeed / abort / canceled) on the executor, and rclpy's action server
answers the client's result request. A cancel of a goal that is still queued ends it immediately; a
running one stops at the engine's next check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse

from rynnec_ros.core.jobs import Job, JobQueue


def failed(response: Any, message: str) -> Any:
    response.success = False
    response.message = message
    return response


class GoalQueue:
    """Owns the action server of ``action_type`` (whose feedback is ``text``/``delta``/``pieces`` and whose
    result has ``success``/``message``) at ``name``; ``refusal(goal_request)`` says why a goal cannot run
    ("" when it can) and ``make_job(goal_request, finish, stream, cancel_requested)`` builds jobs."""

    def __init__(self, node: Any, action_type: Any, name: str, jobs: JobQueue, can_accept: Callable[[], bool],
                 refusal: Callable[[Any], str], make_job: Callable[..., Job], qos: Any, group: Any) -> None:
        self._type = action_type
        self._jobs = jobs
        self._can_accept = can_accept
        self._refusal = refusal
        self._make_job = make_job
        self._waiting: dict[bytes, Job] = {}  # accepted goals whose result is not set yet
        self._results: dict[bytes, Any] = {}
        self.server = ActionServer(
            node, action_type, name, self._finish, goal_callback=self._on_goal,
            handle_accepted_callback=self._on_accepted, cancel_callback=self._on_cancel,
            callback_group=group, goal_service_qos_profile=qos, result_service_qos_profile=qos,
            cancel_service_qos_profile=qos,
        )

    def pending(self) -> bool:
        return bool(self._waiting)

    def _on_goal(self, goal: Any) -> GoalResponse:
        return GoalResponse.ACCEPT if self._can_accept() else GoalResponse.REJECT

    def _on_accepted(self, handle: Any) -> None:
        goal = bytes(handle.goal_id.uuid)
        text: list[str] = []

        def stream(piece: str) -> None:
            text.append(piece)
            handle.publish_feedback(self._type.Feedback(text="".join(text), delta=piece, pieces=len(text)))

        def finish(job: Job, value: Any, error: str) -> None:
            self._results[goal] = value if not error else failed(self._type.Result(), error)
            handle.execute()  # runs _finish on the executor, which sets the terminal state

        job = self._make_job(handle.request, finish, stream, lambda: handle.is_cancel_requested)
        self._waiting[goal] = job
        # The queue may also have filled between goal_callback and here: end the goal with the reason.
        reason = self._refusal(handle.request) or self._jobs.submit(job)
        if reason:
            job.complete(None, reason)

    def _on_cancel(self, handle: Any) -> CancelResponse:
        job = self._waiting.get(bytes(handle.goal_id.uuid))
        if job is not None:  # still queued: answer now instead of when the worker reaches it
            self._jobs.cancel_waiting(job, "cancelled before inference started")
        return CancelResponse.ACCEPT

    def _finish(self, handle: Any) -> Any:
        goal = bytes(handle.goal_id.uuid)
        self._waiting.pop(goal, None)
        result = self._results.pop(goal, None) or failed(self._type.Result(), "no result was recorded")
        if handle.is_cancel_requested:
            handle.canceled()
        elif result.success:
            handle.succeed()
        else:
            handle.abort()
        return result

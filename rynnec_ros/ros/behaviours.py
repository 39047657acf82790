"""py_trees behaviours that ask the cognition node: ``Ask`` (the ``~/ask_stream`` action), ``AskAboutPoint``
(``Ask`` about the object at a 3D point or a pixel click) and ``Segment`` (the ``~/segment_stream`` action),
on the non-blocking handles of ``CognitionClient``.

A behaviour tree ticks every behaviour briefly and often, so nothing here waits for the node: the request
goes out in ``initialise()``, each ``update()`` only polls its handle (RUNNING while in flight, SUCCESS with
the answer, FAILURE with the node's reason in ``feedback_message``), and a behaviour halted while in flight
(``stop(Status.INVALID)``: a higher-priority branch took over, the tree was stopped) cancels its request in
``terminate()``, so the node stops working on a question nobody waits for. py_trees_ros is only released
as an apt package; these build on ``py_trees`` (PyPI) and the client's own rclpy node and executor thread,
so they tick in any tree, with or without ROS spinning in the planner.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import py_trees
from py_trees.common import Access, Status

from rynnec_ros.core.types import Answer, Prompt, Region, WorldPoint
from rynnec_ros.ros.client import CognitionClient, RequestHandle

Inputs = Callable[[], Mapping[str, Any]]
"""Called in ``initialise()``: keyword arguments of the request only known when the behaviour starts (frame
stamps or regions another behaviour found), merged over the ones given to the constructor."""


class _NodeRequest(py_trees.behaviour.Behaviour):
    """One request to the node per run of the behaviour; subclasses say what to send (``_send``).

    ``answer`` holds the latest run's answer (None until it succeeds), ``handle`` its request (the raw
    reply in ``handle.response``, the frames used in ``handle.frame_stamps_ns``). With
    ``blackboard_key`` the answer is also written to that py_trees blackboard key on SUCCESS, for the
    behaviours after it to act on.
    """

    def __init__(self, name: str, client: CognitionClient, blackboard_key: str | None,
                 inputs: Inputs | None) -> None:
        super().__init__(name)
        self.client = client
        self.handle: RequestHandle | None = None
        self.answer: Answer | None = None
        self._inputs = inputs
        self._key = blackboard_key
        self._board: Any | None = None
        if blackboard_key:
            self._board = self.attach_blackboard_client(name=name)
            self._board.register_key(key=blackboard_key, access=Access.WRITE)

    @abc.abstractmethod
    def _send(self, extra: Mapping[str, Any]) -> RequestHandle:
        """Send this run's request (``extra``: what ``inputs`` gave) and return its handle."""

    def _refusal(self, answer: Answer) -> str:
        """Why a successful reply is still FAILURE for this behaviour ("" when it is not)."""
        return ""

    def initialise(self) -> None:
        self.answer, self.handle = None, None
        try:
            self.handle = self._send(self._inputs() if self._inputs is not None else {})
        except (ValueError, TypeError, KeyError, RuntimeError) as exc:
            # bad arguments (a region mask outside the frames, a missing blackboard entry): FAILURE in
            # update(), with the reason, instead of an exception through the tree's tick
            self.feedback_message = f"not sent: {type(exc).__name__}: {exc}"
        else:
            self.feedback_message = "sent"

    def update(self) -> Status:
        if self.handle is None:
            return Status.FAILURE  # initialise() said why
        if not self.handle.is_done():
            self.feedback_message = self._progress()
            return Status.RUNNING
        try:
            answer = self.handle.result()
        except (RuntimeError, TimeoutError) as exc:  # the node's reason, a refusal, the handle's timeout
            self.feedback_message = f"failed: {exc}"
            return Status.FAILURE
        why = self._refusal(answer)
        if why:
            self.feedback_message = f"failed: {why}"
            return Status.FAILURE
        self.answer = answer
        if self._board is not None:
            self._board.set(self._key, answer, overwrite=True)
        self.feedback_message = f"answered: {answer.text[:80]!r}"
        return Status.SUCCESS

    def terminate(self, new_status: Status) -> None:
        # INVALID is py_trees' "halted" (a parent stopped this behaviour while it ran); SUCCESS and
        # FAILURE come from update() with the request already done. cancel() is a no-op once done.
        if new_status == Status.INVALID and self.handle is not None and not self.handle.is_done():
            self.handle.cancel()
            self.feedback_message = "halted: request cancelled"

    def shutdown(self) -> None:
        """The tree is being destroyed: do not leave the node working for it."""
        if self.handle is not None:
            self.handle.cancel()

    def _progress(self) -> str:
        text = self.handle.feedback_text if self.handle is not None else ""
        return f"generating: {text[-60:]!r}" if text else "waiting for the node"


class Ask(_NodeRequest):
    """Ask the node a question over ``~/ask_stream``: RUNNING while it generates, SUCCESS with the answer
    (``answer``, and the blackboard key), FAILURE when the node answered ``success=false`` (bad request,
    timed out, not active, queue full) or the handle's ``timeout_s`` passed, with the reason.

    Arguments are ``CognitionClient.ask_async``'s (``regions``: ``Region.masks`` keys index
    ``frame_stamps_ns``, or are stamps without it); ``inputs`` supplies any of them at start-up. Halting it
    while it runs cancels the goal; its own ``timeout_s`` cancels it too, even when the tree stopped
    ticking it without halting.
    """

    def __init__(
        self,
        name: str,
        client: CognitionClient,
        question: str,
        regions: list[Region] | None = None,
        options: Sequence[str] | None = None,
        task: str | None = None,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        max_new_tokens: int = 0,
        max_frames: int = 0,
        blackboard_key: str | None = None,
        inputs: Inputs | None = None,
    ) -> None:
        super().__init__(name, client, blackboard_key, inputs)
        self._kwargs: dict[str, Any] = {
            "question": question, "regions": regions, "options": options, "task": task,
            "frame_stamps_ns": frame_stamps_ns, "timeout_s": timeout_s, "window_ns": window_ns,
            "max_new_tokens": max_new_tokens, "max_frames": max_frames,
        }

    def _send(self, extra: Mapping[str, Any]) -> RequestHandle:
        return self.client.ask_async(**{**self._kwargs, **extra})


class Segment(_NodeRequest):
    """Referring segmentation over ``~/segment_stream``: RUNNING while in flight, SUCCESS with the answer
    (``answer.masks``: one mask or None per frame used), FAILURE with the reason.

    Arguments are ``CognitionClient.segment_async``'s. With ``require_mask`` (default) an answer without a
    single mask is FAILURE ("no mask"): a tree that segments to act on the object has nothing to act on.
    Halting it while it runs cancels the goal, as for ``Ask``.
    """

    def __init__(
        self,
        name: str,
        client: CognitionClient,
        expression: str,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        object_id: int = 0,
        max_frames: int = 0,
        require_mask: bool = True,
        blackboard_key: str | None = None,
        inputs: Inputs | None = None,
    ) -> None:
        super().__init__(name, client, blackboard_key, inputs)
        self._require_mask = require_mask
        self._kwargs: dict[str, Any] = {
            "expression": expression, "frame_stamps_ns": frame_stamps_ns, "timeout_s": timeout_s,
            "window_ns": window_ns, "object_id": object_id, "max_frames": max_frames,
        }

    def _send(self, extra: Mapping[str, Any]) -> RequestHandle:
        return self.client.segment_async(**{**self._kwargs, **extra})

    def _refusal(self, answer: Answer) -> str:
        if self._require_mask and not any(m is not None and m.any() for m in answer.masks or []):
            return f"no mask for {self._kwargs['expression']!r}"
        return ""


class AskAboutPoint(Ask):
    """Ask about the object at a point: ``Ask`` with one region, ``<object0>`` in the question, given by a
    prompt the node resolves with SAM 2 instead of by masks. RUNNING / SUCCESS / FAILURE and halting as
    for ``Ask``; the node's refusal (a point no frame sees, a frame not buffered, no transform to the
    world frame) is FAILURE with its reason.

    The point is either ``point``, a 3D point in a TF frame (a ``WorldPoint``: RViz's ``/clicked_point``,
    a planner's target), which the node moves into its world frame and clicks on the frames whose depth
    shows it (it needs ``world_frame``, depth and camera_info), or ``pixel``, an (x, y) = (column, row)
    click on frame ``frame`` (an index into ``frame_stamps_ns``, or a frame stamp in ns without it).
    ``inputs`` may supply either at start-up (say ``point`` from a blackboard entry another behaviour
    wrote) with the other arguments of ``Ask``. On SUCCESS ``answer.prompted[0].masks`` are the masks
    the node made of the point.
    """

    def __init__(
        self,
        name: str,
        client: CognitionClient,
        question: str,
        point: WorldPoint | None = None,
        pixel: tuple[float, float] | None = None,
        frame: int = 0,
        object_id: int = 0,
        label: str = "",
        options: Sequence[str] | None = None,
        task: str | None = None,
        frame_stamps_ns: Sequence[int] | None = None,
        timeout_s: float = 120.0,
        window_ns: tuple[int, int] | None = None,
        max_new_tokens: int = 0,
        max_frames: int = 0,
        blackboard_key: str | None = None,
        inputs: Inputs | None = None,
    ) -> None:
        if point is not None and pixel is not None:
            raise ValueError(f"{name}: give a 3D point or a pixel, not both")
        if point is None and pixel is None and inputs is None:
            raise ValueError(f"{name}: give a 3D point, a pixel, or inputs that supply one")
        super().__init__(name, client, question, None, options, task, frame_stamps_ns, timeout_s, window_ns,
                         max_new_tokens, max_frames, blackboard_key, inputs)
        self._where: dict[str, Any] = {"point": point, "pixel": pixel, "frame": frame,
                                        "object_id": object_id, "label": label}

    def _send(self, extra: Mapping[str, Any]) -> RequestHandle:
        given = {k: v for k, v in extra.items() if k in self._where}
        where = {**self._where, **given}
        # a point (or pixel) from ``inputs`` replaces the constructor's, whichever kind that was
        if "point" in given and "pixel" not in given:
            where["pixel"] = None
        elif "pixel" in given and "point" not in given:
            where["point"] = None
        point, pixel = where["point"], where["pixel"]
        if (point is None) == (pixel is None):
            raise ValueError(f"give exactly one of point and pixel, got point={point} and pixel={pixel}")
        if point is not None:
            region = Region(int(where["object_id"]), {}, str(where["label"]), point=point)
        else:
            x, y = pixel
            click = Prompt(int(where["frame"]), [(float(x), float(y))], [1])
            region = Region(int(where["object_id"]), {}, str(where["label"]), prompts=(click,))
        rest = {k: v for k, v in extra.items() if k not in self._where}
        return super()._send({**rest, "regions": [region]})

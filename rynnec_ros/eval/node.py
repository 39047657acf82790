"""Benchmark items through the running cognition node (``--via-node``), so scores measure the deployed stack.

Frames are published as images with synthetic stamps one second apart (so the node's 2 fps ingest and
1 fps query sampling keep every one of them), strictly increasing across items and starting at the
wall clock or after the newest frame a previous run left in the node's buffer, whichever is later; each
request names those stamps so the node answers about exactly the item's frames. The node should not be
fed by a live camera on the same topic meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rynnec_ros.core.types import Answer, EngineInfo, Followed, Frame, Request, StopFn, TokenFn

_STAMP_STEP_NS = 1_000_000_000
_FRAME_RETRIES = 3
# A frame the request names has not reached the node yet (camera topics are best effort; a jump to the
# wall clock is believed after a moment): the request is asked again, then with the frames sent again
# under new stamps.
_MISSING_FRAME_MESSAGES = ("is not in the buffer", "the frame buffer is empty", "is not a buffered frame")


class NodePredictor:
    """Adapter from the runners' predictor calls to ``rynnec_ros.ros.client.CognitionClient``."""

    def __init__(
        self, namespace: str = "", timeout_s: float = 120.0, client: Any = None, wait_s: float = 60.0
    ) -> None:
        self._owns_client = client is None
        if client is None:
            try:
                from rynnec_ros.ros.client import CognitionClient
            except ImportError as exc:
                raise ValueError(
                    "--via-node needs the ROS client rynnec_ros.ros.client.CognitionClient, a sourced ROS 2 "
                    f"environment (. scripts/env.sh) with the node running: {exc}"
                ) from exc
            client = CognitionClient(node_namespace=namespace)
            if not client.wait_for_node(wait_s):
                client.close()
                raise ValueError(
                    f"no cognition node answered within {wait_s:.0f} s (namespace {namespace!r})"
                )
        self.client = client
        self.info = EngineInfo("node")  # the node knows its own backend; its diagnostics say which
        self.timeout_s = timeout_s
        self.retry_pause_s = 0.5
        self._next_ns = time.time_ns()
        self._started = False

    def close(self) -> None:
        """Release the ROS client this adapter created (its DDS participant, executor thread and camera
        publisher); runs in one process, such as the tests', would otherwise each leave one behind."""
        if self._owns_client:
            self.client.close()

    def _publish(self, frames: Sequence[np.ndarray]) -> list[int]:
        if not self._started:
            # Our stamps continue after whatever a previous run left in the node's buffer (its synthetic
            # 1 s steps may run ahead of the wall clock): stamps interleaved with stale frames would be
            # thinned by the node's ingest or held back as a time jump, never matching the request.
            newest = max(self.client.buffered_stamps(), default=0)
            self._next_ns = max(self._next_ns, newest + _STAMP_STEP_NS)
            self._started = True
        stamps = [self._next_ns + k * _STAMP_STEP_NS for k in range(len(frames))]
        self._next_ns += len(frames) * _STAMP_STEP_NS
        self.client.publish_frames(list(frames), stamps)
        # Images and service requests travel on separate DDS channels: ask only once the node has
        # buffered the window (a late frame is still retried in _request).
        self.client.wait_for_frames(stamps, self.timeout_s / 4)
        return stamps

    def answer(self, request: Request, *, on_token: TokenFn | None = None,
               should_stop: StopFn | None = None) -> Answer:
        """The node's ~/ask on the request's frames (published first) and regions, as they are."""
        return self._request(
            request,
            lambda stamps: self.client.ask(
                request.question,
                request.regions or None,
                options=list(request.options) if request.options else None,
                frame_stamps_ns=stamps,
                timeout_s=self.timeout_s,
                max_new_tokens=request.max_new_tokens,
            ),
        )

    def segment(self, request: Request, *, on_token: TokenFn | None = None,
                should_stop: StopFn | None = None) -> Answer:
        # The Segment service has no token limit; the node's max_new_tokens parameter applies.
        return self._request(
            request,
            lambda stamps: self.client.segment(request.question, frame_stamps_ns=stamps,
                                               timeout_s=self.timeout_s),
        )

    def _request(self, request: Request, call: Callable[[list[int]], Answer]) -> Answer:
        """Publish, then ask; a request that overtook its frames (images and services travel on separate
        DDS channels, and the camera QoS is best effort) is asked again after a pause once the node lists
        them, with the frames sent again when it does not list them, and from the second retry on in any
        case. Any other refusal (``success=false``) is an item-level failure, scored like an engine error.

        Frames go again under new stamps after everything buffered, never under their own: once the
        window's later frames are in, a lost first frame is more than ``time_jump_back_s`` older than
        the newest, so the node's buffer takes it for a stray stamp and drops it however often it comes
        (Jazzy CI lost the first frame of a new publisher to discovery this way, and every re-send).
        """
        frames = [f.rgb for f in request.frames]
        stamps = self._publish(frames)
        attempt = 0
        while True:
            try:
                return call(stamps)
            except RuntimeError as exc:
                missing = any(m in str(exc) for m in _MISSING_FRAME_MESSAGES)
                if not missing or attempt == _FRAME_RETRIES:
                    raise ValueError(f"the node refused the request: {exc}") from exc
            attempt += 1
            time.sleep(self.retry_pause_s * attempt)
            if attempt > 1 or not self.client.wait_for_frames(stamps, self.retry_pause_s * attempt):
                # lost on the way (a loaded machine drops best-effort images) or not ingested yet
                stamps = self._publish(frames)

    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        raise ValueError("evaluation through the node does not follow objects")

    def resolve_prompts(self, request: Request) -> Request:
        """Evaluation sends region masks (the benchmarks' own); prompts are not a benchmark input."""
        if any(r.unresolved for r in request.regions):
            raise ValueError("evaluation through the node sends region masks, not prompts")
        return request

    def score_options(self, request: Request, *, should_stop: StopFn | None = None) -> list[float]:
        raise ValueError(
            "the node's services expose no option likelihoods: run EmbSpatial with --strategy generation "
            "when using --via-node"
        )

"""``backend="remote"``: the engine API answered by a site server (``rynnec-ros serve``) over Triton gRPC.

Uses Triton's standard client (``tritonclient.grpc``). Each frame is uploaded once, under a key unique to
this client (``Frame.key``) or to its pixels (no key); questions then name frames by key. A server that
lost frames (restart, eviction) answers ``missing`` and the frames are uploaded again, so a restarted
server is picked up without restarting the robot. Answers stream token by token (a decoupled Triton
model); masks travel run-length encoded. Every wait is bounded by ``request_timeout_s``: a server that
dies mid-request fails that request with the reason instead of hanging it. Each question carries this
client's name (for the server's per-client limit) and an id; ``should_stop`` sends a cancel of that id on
the question's stream, so the server's decode stops too and the engine is free for the other robots.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rynnec_ros.core import wire
from rynnec_ros.core.lru import LRU
from rynnec_ros.core.types import Answer, Cancelled, Followed, Frame, Request, RequestError
from rynnec_ros.model.spec import EngineInfo


class RemoteError(RuntimeError):
    """The site server could not be reached, was lost mid-request, or failed the request."""


_POLL_S = 0.05  # how often a waiting request checks should_stop and its deadline
_UPLOADED_KEYS = 4096  # keys remembered as uploaded; older ones are re-sent if the server asks
CANCEL_ACK_S = 2.0
"""How long a cancelled question waits for the server to confirm the cancel before returning anyway (the
server answers a cancel without waiting for the engine; the bound only covers a server that is gone)."""


def default_client_name() -> str:
    """``host:pid``: one robot process, as the server counts questions in flight per client."""
    return f"{socket.gethostname()}:{os.getpid()}"[: wire.MAX_CLIENT_CHARS]


class RemoteEngine:
    """The engine API (``answer``/``segment``/``score_options`` on a ``Request``) served by a site server."""

    backend = "remote"

    def __init__(
        self,
        server_url: str,
        token: str = "",
        connect_timeout_s: float = 5.0,
        request_timeout_s: float = 120.0,
        client_name: str = "",
    ) -> None:
        if connect_timeout_s <= 0 or request_timeout_s <= 0:
            raise ValueError("connect_timeout_s and request_timeout_s must be > 0")
        self.url = server_url.removeprefix("grpc://")
        if not self.url:
            raise ValueError("backend remote needs server_url (host:port of `rynnec-ros serve`)")
        self.headers = {wire.GRPC_TOKEN_HEADER: token} if token else None
        self.connect_timeout_s = float(connect_timeout_s)
        self.request_timeout_s = float(request_timeout_s)
        self.info = EngineInfo("remote", {"server": f"grpc://{self.url}"})
        self.client_name = client_name or default_client_name()
        """The name the server counts this client's questions in flight under (``--max-client-questions``)."""
        self._session = uuid.uuid4().hex[:12]
        self._uploaded: LRU[str, None] = LRU(_UPLOADED_KEYS)
        self._lock = threading.Lock()
        self._client: Any = None
        self._check_ready()

    # ------------------------------------------------------------------------------------- engine API

    def answer(
        self,
        request: Request,
        *,
        on_token: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Answer:
        """Greedy answer to ``request.question``, computed on the server."""
        return self._call("answer", request, on_token, should_stop)

    def segment(
        self,
        request: Request,
        *,
        on_token: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Answer:
        """Masks of the object ``request.question`` describes, computed on the server."""
        return self._call("segment", request, on_token, should_stop)

    def score_options(
        self, request: Request, *, should_stop: Callable[[], bool] | None = None
    ) -> list[float]:
        """Summed log-likelihood of each of ``request.options``, computed on the server."""
        return self._call("score", request, None, should_stop)

    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        raise ValueError("following objects needs a local engine (backend torch): the site server keeps "
                         "no tracker memory")

    def resolve_prompts(self, request: Request) -> Request:
        """The site server's wire format carries region masks only: prompts are refused by name."""
        if any(r.unresolved for r in request.regions):
            raise ValueError("point and box prompts need a local engine (backend torch): the site server "
                             "takes regions as masks")
        return request

    def close(self) -> None:
        with self._lock:
            self._drop_client()

    # ---------------------------------------------------------------------------------------- plumbing

    def _grpc(self) -> Any:
        if self._client is None:
            import tritonclient.grpc as grpcclient

            self._client = grpcclient.InferenceServerClient(self.url)
        return self._client

    def _drop_client(self) -> None:
        """Forget the connection (and what it held) so the next call reconnects from scratch."""
        if self._client is not None:
            with contextlib.suppress(Exception):  # the channel is being discarded anyway
                self._client.close()
        self._client = None

    def _check_ready(self) -> None:
        """Fail at load, with the reason, when the server or its models are not up."""
        from tritonclient.utils import InferenceServerException

        try:
            c = self._grpc()
            t = self.connect_timeout_s
            if not c.is_server_ready(headers=self.headers, client_timeout=t):
                raise RemoteError(f"inference server {self.url} is up but not ready")
            for model in (wire.FRAMES_MODEL, wire.ASK_MODEL):
                if not c.is_model_ready(model, headers=self.headers, client_timeout=t):
                    raise RemoteError(f"inference server {self.url} does not serve model {model}")
                # a token-guarded endpoint: a missing or wrong token fails here, at load
                c.get_model_config(model, headers=self.headers, client_timeout=t)
        except InferenceServerException as exc:
            self._drop_client()
            raise RemoteError(f"inference server {self.url} is not reachable: {_reason(exc)}") from None

    def _wire_keys(self, frames: Sequence[Frame]) -> list[str]:
        keys = [wire.pixel_key(f.rgb) if f.key is None else f"{self._session}:{f.key!r}" for f in frames]
        if len(set(keys)) != len(keys):
            raise ValueError("frame keys must be unique within a request")
        return keys

    def _upload(self, frames: Sequence[Frame], keys: Sequence[str], force: set[str] | None = None) -> None:
        """Send the frames the server is not known to hold: one call per frame size and per
        ``wire.UPLOAD_CHUNK_BYTES`` of pixels (the server bounds an upload's bytes)."""
        import tritonclient.grpc as grpcclient

        todo: dict[tuple[int, ...], list[tuple[str, np.ndarray]]] = {}
        for f, k in zip(frames, keys, strict=True):
            if not (force and k in force) and self._uploaded.touch(k):
                continue
            rgb = np.ascontiguousarray(f.rgb)
            if rgb.dtype != np.uint8 or rgb.ndim != 3 or rgb.shape[2] != 3:
                raise ValueError(f"frame must be H×W×3 uint8, got {rgb.dtype} {rgb.shape}")
            todo.setdefault(rgb.shape, []).append((k, rgb))
        chunks = []
        for shape, group in todo.items():
            per_call = max(1, wire.UPLOAD_CHUNK_BYTES // int(np.prod(shape)))
            chunks += [group[i:i + per_call] for i in range(0, len(group), per_call)]
        for group in chunks:
            names = np.array([k.encode() for k, _ in group], dtype=object)
            pixels = np.stack([rgb for _, rgb in group])
            ik = grpcclient.InferInput("keys", [len(group)], "BYTES")
            ik.set_data_from_numpy(names)
            ip = grpcclient.InferInput("rgb", list(pixels.shape), "UINT8")
            ip.set_data_from_numpy(pixels)
            self._grpc().infer(
                wire.FRAMES_MODEL, [ik, ip], headers=self.headers, client_timeout=self.request_timeout_s
            )
            for k, _ in group:
                self._uploaded.put(k, None)

    def _call(
        self,
        op: str,
        request: Request,
        on_token: Callable[[str], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> Any:
        from tritonclient.utils import InferenceServerException

        if not request.frames:
            raise ValueError("at least one frame is required")
        with self._lock:
            keys = self._wire_keys(request.frames)
            qid = uuid.uuid4().hex
            body = wire.encode_request(
                op, request, keys, stream=on_token is not None, client=self.client_name, request_id=qid
            )
            try:
                self._upload(request.frames, keys)
                kind, doc = self._ask(body, qid, on_token, should_stop)
                if kind == "missing":  # the server restarted or evicted them: send them again, once
                    self._upload(request.frames, keys, force=set(doc["keys"]))
                    kind, doc = self._ask(body, qid, on_token, should_stop)
            except InferenceServerException as exc:
                self._drop_client()
                raise RemoteError(f"inference server {self.url} failed the request: {_reason(exc)}") from None
        if kind == "answer":  # a mask is never larger than the largest frame asked about
            largest = max(int(np.shape(f.rgb)[0]) * int(np.shape(f.rgb)[1]) for f in request.frames)
            return wire.decode_answer(json.dumps(doc).encode(), max_pixels=largest)
        if kind == "scores":
            return [float(s) for s in doc["scores"]]
        if kind == "error":
            exc_type = RequestError if doc.get("type") == "ValueError" else RemoteError
            raise exc_type(doc.get("message", "the server gave no reason"))
        raise RemoteError(f"inference server {self.url} still lacks frames {doc.get('keys')} after re-upload")

    def _ask(
        self,
        body: bytes,
        qid: str,
        on_token: Callable[[str], None] | None,
        should_stop: Callable[[], bool] | None,
    ) -> tuple[str, dict[str, Any]]:
        """One streamed request: tokens go to ``on_token`` here (the caller's thread) until a final kind.

        On ``should_stop`` a cancel of ``qid`` goes out on the same stream and its acknowledgement is
        awaited (at most ``CANCEL_ACK_S``) before ``Cancelled`` is raised."""
        import tritonclient.grpc as grpcclient
        from tritonclient.utils import InferenceServerException

        events: queue.Queue[tuple[Any, Any]] = queue.Queue()
        client = self._grpc()
        client.start_stream(
            callback=lambda result, error: events.put((result, error)),
            stream_timeout=self.request_timeout_s,
            headers=self.headers,
        )
        deadline = time.monotonic() + self.request_timeout_s
        finished = False
        try:
            inp = grpcclient.InferInput("request", [1], "BYTES")
            inp.set_data_from_numpy(np.array([body], dtype=object))
            try:
                client.async_stream_infer(wire.ASK_MODEL, [inp], request_id=qid)
            except InferenceServerException:
                # the stream broke before the request went out; its callback holds the real reason
                with contextlib.suppress(queue.Empty):
                    _, error = events.get(timeout=1.0)
                    if error is not None:
                        raise error from None
                raise
            while True:
                if should_stop is not None and should_stop():
                    self._cancel(client, events, qid)
                    raise Cancelled("stopped by should_stop")
                if time.monotonic() > deadline:
                    raise RemoteError(
                        f"inference server {self.url} gave no answer in {self.request_timeout_s:g} s"
                    )
                try:
                    result, error = events.get(timeout=_POLL_S)
                except queue.Empty:
                    continue
                if error is not None:
                    raise error
                kind = result.as_numpy("kind")
                if kind is None:  # an empty final response of the decoupled model
                    continue
                name = bytes(kind.ravel()[0]).decode()
                doc = json.loads(bytes(result.as_numpy("body").ravel()[0]).decode())
                if name == "token":
                    if on_token is not None:
                        on_token(doc["text"])
                    continue
                finished = True
                return name, doc
        finally:
            client.stop_stream(cancel_requests=not finished)  # an abandoned request is cancelled


    def _cancel(self, client: Any, events: queue.Queue[tuple[Any, Any]], qid: str) -> bool:
        """Send a cancel of ``qid`` on the open stream; whether the server confirmed it stopped it."""
        import tritonclient.grpc as grpcclient
        from tritonclient.utils import InferenceServerException

        inp = grpcclient.InferInput("request", [1], "BYTES")
        inp.set_data_from_numpy(np.array([wire.encode_cancel(qid, self.client_name)], dtype=object))
        cancel_id = f"cancel-{qid}"
        try:
            client.async_stream_infer(wire.ASK_MODEL, [inp], request_id=cancel_id)
        except InferenceServerException:
            return False  # the stream is gone: so is the question with it
        deadline = time.monotonic() + CANCEL_ACK_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                result, error = events.get(timeout=left)
            except queue.Empty:
                break
            if error is not None:
                return False
            kind = result.as_numpy("kind")
            if kind is None or result.get_response().id != cancel_id:
                continue  # the question's own tokens and its final error
            doc = json.loads(bytes(result.as_numpy("body").ravel()[0]).decode())
            return bool(doc.get("found"))
        return False


def _reason(exc: Exception) -> str:
    """The useful part of a tritonclient exception (its status and message)."""
    status = getattr(exc, "status", lambda: None)()
    message = getattr(exc, "message", lambda: str(exc))()
    return f"{status}: {message}" if status else str(message)

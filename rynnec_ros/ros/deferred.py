"""Services answered later, from the worker, without an executor thread waiting for each request.

rclpy answers a service with whatever its callback returns, so a request waiting for the model would
hold an executor thread (a coroutine callback is no better: rclpy's executor re-polls a pending task on
every spin, a busy loop on a robot's CPU). rclpy's executor does hand the request header to
``Service.send_response(response, header)`` after the callback returns; a deferred service intercepts
that call for the placeholder its callback returned, keeps the header, and the worker sends the real
response later with the same public ``send_response``. Whichever of the two comes second sends.
Holds for Humble, Jazzy and Kilted, whose executors all end a service call with
``srv.send_response(response, header)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.service import Service


class Reply:
    """The later answer to one request: ``send(response)`` once, from any thread."""

    def __init__(self, deferred: DeferredService, placeholder: Any) -> None:
        self._deferred = deferred
        self.placeholder = placeholder
        self._header: Any | None = None
        self._response: Any | None = None
        self._lock = threading.Lock()

    def _got_header(self, header: Any) -> None:
        with self._lock:
            self._header = header
            response = self._response
        if response is not None:
            self._deferred.send(response, header)

    def send(self, response: Any) -> None:
        with self._lock:
            self._response = response
            header = self._header
        if header is not None:
            self._deferred.send(response, header)


class DeferredService:
    """Wraps a service made by ``node.create_service`` so its callback may answer later via ``Reply``.

    ``handler(request, reply)`` returns either a response (answered now) or ``reply.placeholder``
    (answered when something calls ``reply.send``).
    """

    def __init__(self, service: Service[Any, Any], on_send_error: Callable[[str], None]) -> None:
        self.service = service
        self._on_send_error = on_send_error
        self._waiting: dict[int, Reply] = {}
        self._lock = threading.Lock()
        self._send_now = service.send_response
        service.send_response = self._intercept  # type: ignore[method-assign]

    def reply_for(self, placeholder: Any) -> Reply:
        reply = Reply(self, placeholder)
        with self._lock:
            self._waiting[id(placeholder)] = reply
        return reply

    def waiting(self) -> bool:
        """Whether a deferred response still waits for the executor to hand over its header."""
        with self._lock:
            return bool(self._waiting)

    def _intercept(self, response: Any, header: Any) -> None:
        with self._lock:
            reply = self._waiting.pop(id(response), None)
        if reply is None or response is not reply.placeholder:
            self._send_now(response, header)
        else:
            reply._got_header(header)

    def send(self, response: Any, header: Any) -> None:
        try:
            self._send_now(response, header)
        except Exception as exc:  # the client left or the node is going down: nothing to answer to
            self._on_send_error(
                f"could not send a {self.service.srv_name} response: {type(exc).__name__}: {exc}")

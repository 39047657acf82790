"""One rule for every callback: no exception ends the process; it is logged once and counted.

rclpy lets an exception from a subscription, service, timer or action callback propagate out of
``executor.spin`` and the node dies with it: one bad message from one misbehaving driver would take the
robot's cognition down. The node wraps each callback here instead. Expected problems with an input
(ValueError: a bad image, stamp or camera_info) are dropped with a throttled warning per kind; anything
else is a bug, logged with the input's stamp the first time and counted in /diagnostics.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

WARN_PERIOD_S = 5.0


class CallbackGuard:
    def __init__(self, logger: Any) -> None:
        self._logger = logger
        self.errors: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self._warned: dict[str, float] = {}

    def warn(self, key: str, message: str) -> None:
        """At most one warning per ``key`` every WARN_PERIOD_S (rclpy's throttle is per call site, so a
        bad camera_info stream would otherwise silence the colour topic's warnings)."""
        now = time.monotonic()
        if now - self._warned.get(key, -WARN_PERIOD_S) >= WARN_PERIOD_S:
            self._warned[key] = now
            self._logger.warning(message)

    def failed(self, what: str, args: tuple[Any, ...], exc: BaseException) -> None:
        key = f"{what}: {type(exc).__name__}"
        self.errors[key] += 1
        stamp = getattr(getattr(args[0], "header", None), "stamp", None) if args else None
        where = f" (input stamped {stamp.sec}.{stamp.nanosec:09d})" if stamp is not None else ""
        if self.errors[key] == 1:
            self._logger.error(f"{what} callback failed{where}: {type(exc).__name__}: {exc}")

    def call(self, what: str, fn: Callable[..., None]) -> Callable[..., None]:
        """A timer/subscription callback that logs and counts instead of raising."""
        def guarded(*args: Any) -> None:
            try:
                fn(*args)
            except Exception as exc:
                self.failed(what, args, exc)

        return guarded

    def ingest(self, what: str, fn: Callable[[Any], str | None]) -> Callable[[Any], None]:
        """A camera callback: ValueError drops the message (counted per kind), a returned note is logged."""
        def call(msg: Any) -> None:
            try:
                note = fn(msg)
            except ValueError as exc:
                self.dropped[what] += 1
                self.warn(what, f"dropping {what} frame: {exc}")
                return
            except Exception as exc:
                self.failed(what, (msg,), exc)
                return
            if note:  # throttled per kind of note (numbers aside), so a reset never hides a replacement
                self.warn(f"{what} note: {re.sub(r'[0-9]+', '#', note)}", note)

        return call

    def service(self, what: str, fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        """A service callback that answers ``internal error: ...`` instead of raising."""
        def guarded(request: Any, response: Any) -> Any:
            try:
                return fn(request, response)
            except Exception as exc:
                self.failed(what, (), exc)
                fresh = type(response)()
                if hasattr(fresh, "success"):
                    fresh.success = False
                    fresh.message = f"internal error: {type(exc).__name__}: {exc}"
                return fresh

        return guarded

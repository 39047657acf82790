"""The node's /diagnostics status: one DiagnosticStatus with the counters an operator looks at."""

from __future__ import annotations

import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from rynnec_ros.core.buffer import FrameBuffer
from rynnec_ros.core.jobs import JobQueue
from rynnec_ros.core.types import Predictor
from rynnec_ros.ros.guard import CallbackGuard
from rynnec_ros.ros.ingest import CameraIngest

NO_FRAMES_WARN_S = 5.0


def diagnostics(node: Any, state: str, buffer: FrameBuffer, ingest: CameraIngest, jobs: JobQueue,
                guard: CallbackGuard, engine: Predictor | None) -> DiagnosticArray:
    s, q, p, errors = ingest.stats, jobs.stats, node.params, guard.errors
    level, message = DiagnosticStatus.OK, "ok"
    if state != "active":
        level, message = DiagnosticStatus.WARN, state
    elif s.last_frame_wall == 0 or time.monotonic() - s.last_frame_wall > NO_FRAMES_WARN_S:
        level, message = DiagnosticStatus.WARN, f"no camera frames in the last {NO_FRAMES_WARN_S:.0f} s"
    elif len(jobs) >= p.requests.request_queue_size:
        level, message = DiagnosticStatus.WARN, "request queue full"
    if errors:
        level = DiagnosticStatus.ERROR
        message = f"{sum(errors.values())} callback errors (see last_callback_error)"
    values: dict[str, Any] = {
        "buffered_frames": len(buffer),
        "buffered_mb": round(buffer.nbytes / (1 << 20), 2),
        "buffer_resets": buffer.resets,
        "stamp_outliers_dropped": buffer.outliers,
        "frames_in": s.frames_in,
        "frames_kept": s.frames_kept,
        "frames_bad": guard.dropped["colour"],
        "depth_bad": guard.dropped["depth"],
        "camera_info_bad": guard.dropped["camera_info"],
        "camera_distortion": ingest.distortion or "none",
        "queue_length": len(jobs),
        "requests": q.accepted + q.rejected,
        "answered": q.answered,
        "failed": q.failed,
        "rejected": q.rejected,
        "cancelled": q.cancelled,
        "timed_out": q.timed_out,
        "last_inference_s": round(q.last_inference_s, 3),
        "last_error": q.last_error,
        "callback_errors": sum(errors.values()),
        "last_callback_error": next(reversed(errors), ""),
        "checkpoint": p.engine.checkpoint,
        "backend": engine.info.backend if engine is not None else "none",  # what was loaded, not what is set
        # held by the engine's feature and prefix caches, at most cache_mb (a remote engine holds none here)
        "engine_cache_mb": round(getattr(engine, "cache_nbytes", 0) / (1 << 20), 2),
    }
    status = DiagnosticStatus(
        level=level, name=f"rynnec_ros: {node.get_fully_qualified_name()}", message=message,
        hardware_id=p.engine.device, values=[KeyValue(key=k, value=str(v)) for k, v in values.items()],
    )
    return DiagnosticArray(status=[status])

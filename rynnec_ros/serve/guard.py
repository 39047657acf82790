"""Checks on frame uploads that run inside Triton's Python backend stub, before PyTriton sees them.

``rynnec-ros serve`` installs this file as the ``model.py`` of both Triton models; PyTriton's own proxy
model becomes ``pytriton_proxy.py`` beside it and this module's ``TritonPythonModel`` extends it
(``server.install_guard``). Why it has to run there: PyTriton 0.7's proxy serializes every request into
shared memory before this process's inference function is called, and that fails for a tensor with a
zero in its shape (``memoryview: cannot cast view with zeros in shape or strides``); and any error of a
non-decoupled PyTriton model (``rynnec_frames``) reaches the client as the proxy's Python traceback
(``Model execute error: Traceback ... File "/tmp/.../model.py" ...``). Here a bad upload is answered
with a one-line reason (``InferenceResponse(error=...)``) and never reaches the proxy, so it cannot
change what the next request gets. ``rynnec_ask`` requests pass straight through: their one BYTES
element is checked by Triton (shape) and by the server (the JSON body, ``wire.decode_request``).

The module is self-contained (numpy and the standard library; the stub may not find ``rynnec_ros``):
its limits come from ``rynnec_guard.json`` written next to it. ``check_upload`` is a plain function,
also used by the server itself and tested without Triton.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

LIMITS_FILE = "rynnec_guard.json"
PROXY_MODULE = "pytriton_proxy"
FRAMES_MODEL = "rynnec_frames"


def check_upload(keys: Any, rgb: Any, max_pixels: int, max_frames: int, max_key_chars: int,
                 max_bytes: int) -> str | None:
    """Why an upload (``keys`` BYTES[N] of UTF-8 text, ``rgb`` UINT8[N, H, W, 3]) is refused, or None.

    Only the shapes and the key bytes are read: nothing is allocated for the declared sizes. ``max_bytes``
    bounds the pixels of the whole upload (N·H·W·3), the memory one request may make the server hold."""
    where = FRAMES_MODEL
    if keys is None or rgb is None:
        return f"{where}: inputs 'keys' and 'rgb' are both required"
    shape = [int(d) for d in np.shape(rgb)]
    if len(shape) != 4 or shape[3] != 3:
        return f"{where}: rgb must be N×H×W×3 uint8, got shape {shape}"
    names = np.asarray(keys, dtype=object).ravel()
    n = int(names.shape[0])
    if n == 0:
        return f"{where}: no keys: an upload carries at least one frame (rgb shape {shape})"
    if n != shape[0]:
        return f"{where}: {n} keys for {shape[0]} frames (rgb shape {shape}): one key per frame"
    if n > max_frames:
        return f"{where}: {n} frames in one upload, more than the limit {max_frames}"
    h, w = shape[1], shape[2]
    if h < 1 or w < 1:
        return f"{where}: rgb frames are {h}×{w} pixels (shape {shape}): height and width must be at least 1"
    if h * w > max_pixels:
        return f"{where}: rgb frames are {h}×{w} = {h * w} pixels, more than the limit {max_pixels}"
    if n * h * w * 3 > max_bytes:
        return (f"{where}: {n} frames of {h}×{w}×3 are {n * h * w * 3} bytes in one upload, more than the "
                f"limit {max_bytes} (--max-upload-mb); send them in several uploads")
    for i, k in enumerate(names):
        if not isinstance(k, (bytes, np.bytes_)):
            return f"{where}: keys[{i}] must be BYTES (UTF-8 text), got {type(k).__name__}"
        try:
            text = bytes(k).decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"{where}: keys[{i}] is not UTF-8 text (byte {exc.start})"
        if not text:
            return f"{where}: keys[{i}] is empty"
        if len(text) > max_key_chars:
            return f"{where}: keys[{i}] has {len(text)} characters, more than the limit {max_key_chars}"
    if len({bytes(k) for k in names}) != n:
        return f"{where}: keys must be unique within an upload"
    return None


def one_line(exc: BaseException) -> str:
    """The last line of an error's text that is not traceback furniture: what went wrong, not where."""
    skip = ("Traceback", "At:", "During handling", "The above exception", "Model execute error")
    lines = [
        line.strip()
        for line in str(exc).splitlines()
        if line.strip() and not line.startswith((" ", "\t")) and not line.startswith(skip)
    ]
    text = lines[-1] if lines else type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


try:  # only inside Triton's Python backend stub, where this file is the model's model.py
    import triton_python_backend_utils as pb_utils  # type: ignore[import-not-found]
except ImportError:
    pb_utils = None

if pb_utils is not None and __name__.rsplit(".", 1)[-1] == "model":  # pragma: no cover (runs in the stub)
    import importlib

    _Proxy: Any = importlib.import_module(f"{__package__}.{PROXY_MODULE}").TritonPythonModel

    def _error(reason: str) -> Any:
        try:
            err = pb_utils.TritonError(reason, pb_utils.TritonError.INVALID_ARG)
        except (AttributeError, TypeError):  # an older stub without error codes
            err = pb_utils.TritonError(reason)
        return pb_utils.InferenceResponse(error=err)

    class TritonPythonModel(_Proxy):  # type: ignore[misc, valid-type]
        """PyTriton's proxy model with bad uploads answered here, and errors as one line."""

        def initialize(self, args: dict[str, Any]) -> None:
            config = json.loads(args["model_config"])
            self._guard_model = str(config.get("name", ""))
            self._guard_limits = json.loads(Path(__file__).with_name(LIMITS_FILE).read_text())
            super().initialize(args)

        def execute(self, requests: list[Any]) -> Any:
            if self._guard_model != FRAMES_MODEL:
                return super().execute(requests)
            lim = self._guard_limits
            reasons: list[str | None] = []
            for r in requests:
                keys = pb_utils.get_input_tensor_by_name(r, "keys")
                rgb = pb_utils.get_input_tensor_by_name(r, "rgb")
                reasons.append(
                    check_upload(
                        None if keys is None else keys.as_numpy(),
                        None if rgb is None else rgb.as_numpy(),  # a view of Triton's buffer, no copy
                        lim["max_pixels"],
                        lim["max_frames"],
                        lim["max_key_chars"],
                        lim["max_upload_bytes"],
                    )
                )
            good = [r for r, why in zip(requests, reasons, strict=True) if why is None]
            done: list[Any] = []
            if good:
                try:
                    done = list(super().execute(good))
                except Exception as exc:  # the proxy's error is a Python traceback: keep its last line
                    print(f"[rynnec guard] {FRAMES_MODEL} failed: {exc}", file=sys.stderr, flush=True)
                    why = one_line(exc)
                    done = [_error(f"{FRAMES_MODEL}: {why}") for _ in good]
            answers = iter(done)
            return [next(answers) if why is None else _error(why) for why in reasons]

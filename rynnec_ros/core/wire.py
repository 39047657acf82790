"""The wire format between robots and the site server, shared by ``server`` and the ``remote`` backend.

Everything crosses as Triton tensors: raw uint8 pixels for frame uploads and UTF-8 JSON for requests
and answers (masks as COCO RLE, ``core.masks``). Nothing is pickled, so a client can never make the server
execute code and vice versa.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import masks as rle
from .masks import as_int, describe
from .types import Answer, Region, Request, RequestError

FRAMES_MODEL = "rynnec_frames"
"""Upload model: stores frames under their wire keys, so questions refer to them by key."""
ASK_MODEL = "rynnec_ask"
"""Decoupled model: one request in, streamed ``token`` responses and one ``answer`` (or ``error``) out."""
TOKEN_HEADER = "triton-access-token"
"""HTTP header Triton itself checks when the server has a token (PyTriton's name for it)."""
GRPC_TOKEN_HEADER = "triton-grpc-protocol-" + TOKEN_HEADER
"""The same token as gRPC metadata: Triton prefixes restricted-protocol keys with the protocol name."""
OPS = ("answer", "segment", "score")
CANCEL_OP = "cancel"
"""A request on ``ASK_MODEL`` that stops a question in flight: ``{"op": "cancel", "id": ..., "client": ...}``,
answered with one ``cancelled`` response ``{"id": ..., "found": true|false}``. Triton's own gRPC cancel does
not reach a PyTriton model (its proxy has no request-cancelled check), so the wire carries one."""

DEFAULT_PORT = 8001


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (``localhost`` counts)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str) -> None:
    """Refuse to expose the engine off loopback without an access token (no anonymous site access)."""
    if not is_loopback(host) and not token:
        raise ValueError(
            f"--host {host} is reachable from other machines: give a token (--token-file or the "
            f"{TOKEN_ENV} environment variable; robots send it as "
            f"'{TOKEN_HEADER}') or bind to 127.0.0.1"
        )


TOKEN_ENV = "RYNNEC_SERVER_TOKEN"
"""Environment variable the site token is read from by default (server and robots)."""


def read_token(path: str = "", env: str = TOKEN_ENV) -> tuple[str, str]:
    """(token, warning): the site token from the file ``path``, else from the environment variable ``env``.

    A token belongs in neither a command line (``ps`` shows it to every user) nor a ROS parameter (every
    peer on the domain can read it). ``warning`` is non-empty when the file is readable by other users,
    as ssh warns for a key; the token itself never appears in a message.
    """
    if not path:
        return os.environ.get(env, ""), ""
    try:
        mode = os.stat(path).st_mode
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ValueError(f"cannot read the token file {path}: {why}") from None
    warning = (f"token file {path} can be read by other users (mode {mode & 0o777:o}): chmod 600 {path}"
               if mode & 0o077 else "")
    return token, warning


def pixel_key(rgb: np.ndarray) -> str:
    """Content key for a frame without ``Frame.key``: identical pixels may share features across robots."""
    h = hashlib.blake2b(np.ascontiguousarray(rgb).data, digest_size=16)
    h.update(repr(rgb.shape).encode())
    return "px:" + h.hexdigest()


# -------------------------------------------------------------------------------------------- limits
# What the site server accepts (docs/serving.md, "Limits"). The text, region, option and token limits are
# also the robot node's (rynnec_ros/ros/messages.py, and the max_question_chars default and max_new_tokens
# bound in rynnec_ros/ros/params.py import them): the server faces every robot of a site, so a request the
# node would refuse never gets model time here either.

MAX_QUESTION_CHARS = 4096
"""Longest question, option, region label or task (characters): the node's default max_question_chars."""
MAX_REGIONS = 64
"""Most regions in one question (the node's MAX_REGIONS)."""
MAX_MASKS_PER_REGION = 64
"""Most masks one region carries (the node's MAX_MASKS_PER_REGION)."""
MAX_OPTIONS = 64
"""Most options in one question (the node's MAX_OPTIONS)."""
MAX_NEW_TOKENS = 8192
"""Largest max_new_tokens of one question (the node's MAX_NEW_TOKENS)."""
MAX_FRAMES = 1000
"""Most frame keys one question names and most frames one upload carries (the node's MAX_STAMPS, and the
top of its max_frames_per_query range)."""
MAX_KEY_CHARS = 1024
"""Longest frame key (characters of UTF-8 text); the remote backend's are far shorter."""
MAX_IMAGE_PIXELS = 3840 * 2160
"""Default pixel budget of one uploaded frame (H×W), and so of one region mask, which is the size of its
frame: the node's default max_image_pixels (4K UHD). ``rynnec-ros serve --max-image-pixels`` changes it."""
UPLOAD_CHUNK_BYTES = 64 << 20
"""Most pixel bytes the remote backend puts into one frame upload (more frames go in further calls; a
single frame larger than this goes alone): well inside gRPC's message limit, and what the server's
``--max-upload-mb`` may not go below."""
MAX_UPLOAD_BYTES = 256 << 20
"""Default pixel budget (N·H·W·3 bytes) of one frame upload on the server, checked from the declared
shape before anything is stored: ``rynnec-ros serve --max-upload-mb`` changes it."""
MAX_REQUEST_BYTES = 64 << 20
"""Largest question body (UTF-8 JSON), checked before it is parsed."""
MAX_MASK_PIXELS = 1 << 28
"""Most mask pixels all regions of one question may decode to together (256 Mi booleans)."""
MAX_CLIENT_CHARS = 256
"""Longest client name (a robot's ``host:pid``, or what its operator names it)."""
MAX_ID_CHARS = 128
"""Longest question id (the remote backend's are 32 hex digits)."""


def _text(value: Any, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise RequestError(f"{what} must be a string, got {describe(value)}")
    if len(value) > MAX_QUESTION_CHARS:
        raise RequestError(f"{what} has {len(value)} characters, more than the limit {MAX_QUESTION_CHARS}")
    return value


def _name(value: Any, what: str, limit: int, empty: bool) -> None:
    """A client name or question id: text of at most ``limit`` characters (``empty``: may be '')."""
    if not isinstance(value, str) or (not value and not empty):
        raise RequestError(f"{what} must be a {'' if empty else 'non-empty '}string, got {describe(value)}")
    if len(value) > limit:
        raise RequestError(f"{what} has {len(value)} characters, more than the limit {limit}")


# ------------------------------------------------------------------------------------------ requests


def encode_request(
    op: str, request: Request, keys: Sequence[str], stream: bool, client: str = "", request_id: str = ""
) -> bytes:
    """The JSON body of an ``ASK_MODEL`` call; frames travel as keys of earlier uploads.

    ``client`` names the robot for the server's per-client limit on questions in flight; ``request_id``
    lets that client cancel the question (``encode_cancel``). The server's limits are checked here too,
    so a robot learns of an oversized request at once with the reason the server would give."""
    if op not in OPS:
        raise RequestError(f"unknown op {op!r}; one of {OPS}")
    regions = []
    for r in request.regions:
        masks = r.frame_masks(len(request.frames))
        regions.append(
            {
                "object_id": int(r.object_id),
                "label": r.label,
                "masks": [{"frame": i, "rle": rle.encode(m)} for i, m in sorted(masks.items())],
            }
        )
    doc = {
        "op": op,
        "question": request.question,
        "keys": list(keys),
        "regions": regions,
        "options": None if request.options is None else list(request.options),
        "task": request.task,
        "max_new_tokens": int(request.max_new_tokens),
        "stream": bool(stream),
        "client": client,
        "id": request_id,
    }
    body = json.dumps(doc).encode()
    if keys:  # a request whose frames are still to be named (tests) is only checked by the server
        check_request(doc, len(body))
    return body


def encode_cancel(request_id: str, client: str = "") -> bytes:
    """The body that cancels ``client``'s question ``request_id`` (see ``CANCEL_OP``)."""
    doc = {"op": CANCEL_OP, "id": request_id, "client": client}
    check_request(doc)
    return json.dumps(doc).encode()


def decode_request(body: bytes) -> dict[str, Any]:
    """Parse and check an ``ASK_MODEL`` body (the server never trusts its shape): ValueError with a
    one-line reason naming the bad field for anything but the documented JSON within the limits above.
    Region masks are only checked for their shape here; ``regions_from_wire`` decodes them against the
    frames."""
    if len(body) > MAX_REQUEST_BYTES:
        raise RequestError(f"request body has {len(body)} bytes, more than the limit {MAX_REQUEST_BYTES}")
    try:
        text = bytes(body).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"request body is not UTF-8 (byte {exc.start})") from None
    try:
        doc = json.loads(text)
    except RecursionError:
        raise RequestError("request body is nested too deeply") from None
    except ValueError as exc:
        raise RequestError(f"request body is not JSON: {exc}") from None
    check_request(doc, len(body))
    return dict(doc)


def check_request(doc: Any, size: int = 0) -> None:
    """The checks of ``decode_request`` on a parsed body (``size``: its length in bytes)."""
    if size > MAX_REQUEST_BYTES:
        raise RequestError(f"request body has {size} bytes, more than the limit {MAX_REQUEST_BYTES}")
    if not isinstance(doc, dict):
        raise RequestError(f"request body must be a JSON object, got {describe(doc)}")
    _name(doc.get("client", ""), "request client", MAX_CLIENT_CHARS, empty=True)
    if doc.get("op") == CANCEL_OP:
        _name(doc.get("id"), "cancel id", MAX_ID_CHARS, empty=False)
        return
    if doc.get("op") not in OPS:
        raise RequestError(f"request op must be one of {(*OPS, CANCEL_OP)}, got {describe(doc.get('op'))}")
    _name(doc.get("id", ""), "request id", MAX_ID_CHARS, empty=True)
    _text(doc.get("question"), "request question")
    keys = doc.get("keys")
    if not isinstance(keys, list) or not keys:
        raise RequestError("request keys must be a non-empty list of frame keys")
    if len(keys) > MAX_FRAMES:
        raise RequestError(f"request names {len(keys)} frames, more than the limit {MAX_FRAMES}")
    for i, k in enumerate(keys):
        if not isinstance(k, str) or not k:
            raise RequestError(f"request keys[{i}] must be a non-empty string, got {describe(k)}")
        if len(k) > MAX_KEY_CHARS:
            raise RequestError(
                f"request keys[{i}] has {len(k)} characters, more than the limit {MAX_KEY_CHARS}"
            )
    if len(set(keys)) != len(keys):
        raise RequestError("request keys must be unique (each names one frame)")
    mnt = doc.get("max_new_tokens")
    if isinstance(mnt, bool) or not isinstance(mnt, int):
        raise RequestError(f"request max_new_tokens must be an integer, got {describe(mnt)}")
    if not 0 <= mnt <= MAX_NEW_TOKENS:
        raise RequestError(f"request max_new_tokens {mnt} is outside 0..{MAX_NEW_TOKENS}")
    if not isinstance(doc.get("stream", False), bool):
        raise RequestError(f"request stream must be true or false, got {describe(doc.get('stream'))}")
    _text(doc.get("task"), "request task", optional=True)
    options = doc.get("options")
    if options is not None:
        if not isinstance(options, list):
            raise RequestError(f"request options must be a list of strings, got {describe(options)}")
        if len(options) > MAX_OPTIONS:
            raise RequestError(f"request has {len(options)} options, at most {MAX_OPTIONS} are accepted")
        for i, o in enumerate(options):
            _text(o, f"request option {i}")
    regions = doc.get("regions")
    if regions is None:
        return
    if not isinstance(regions, list):
        raise RequestError(f"request regions must be a list, got {describe(regions)}")
    if len(regions) > MAX_REGIONS:
        raise RequestError(f"request has {len(regions)} regions, at most {MAX_REGIONS} are accepted")
    for k, r in enumerate(regions):
        where = f"region {k}"
        if not isinstance(r, dict):
            raise RequestError(f"{where} must be an object with object_id and masks, got {describe(r)}")
        as_int(r.get("object_id"), f"{where} object_id")
        _text(r.get("label", ""), f"{where} label")
        masks = r.get("masks")
        if not isinstance(masks, list) or not masks:
            raise RequestError(f"{where} masks must be a non-empty list of {{frame, rle}}")
        if len(masks) > MAX_MASKS_PER_REGION:
            raise RequestError(f"{where} has {len(masks)} masks, at most {MAX_MASKS_PER_REGION}")
        seen: set[int] = set()
        for j, m in enumerate(masks):
            if not isinstance(m, dict) or "rle" not in m:
                raise RequestError(f"{where} mask {j} must be an object with frame and rle")
            frame = as_int(m.get("frame"), f"{where} mask {j} frame")
            if not 0 <= frame < len(keys):
                raise RequestError(
                    f"{where} mask {j} is on frame {frame}, but the request names {len(keys)} frames"
                )
            if frame in seen:
                raise RequestError(f"{where} has two masks on frame {frame}")
            seen.add(frame)
            if not isinstance(m["rle"], dict):
                raise RequestError(f"{where} mask {j} rle must be an object with size and counts")


def regions_from_wire(
    regions: list[dict[str, Any]] | None,
    shapes: Sequence[Sequence[int]] | None = None,
    max_pixels: int | None = MAX_IMAGE_PIXELS,
) -> list[Region]:
    """Regions of a checked request body; each mask must be the size of its frame (``shapes[frame]``,
    H×W) when the frames are given. Every mask's size and counts are checked, and the request's total
    against ``MAX_MASK_PIXELS``, before any mask is decoded."""
    regions = regions or []
    sizes = {}
    total = 0
    for k, r in enumerate(regions):
        for j, m in enumerate(r["masks"]):
            frame = int(m["frame"])
            shape = None if shapes is None else shapes[frame]
            try:
                h, w = rle.check(m["rle"], shape, max_pixels)
            except ValueError as exc:
                raise RequestError(f"region {k} mask {j} (frame {frame}): {exc}") from None
            sizes[k, j] = (h, w)
            total += h * w
    if total > MAX_MASK_PIXELS:
        raise RequestError(f"the request's region masks add up to {total} pixels, more than "
                           f"{MAX_MASK_PIXELS}")
    return [
        Region(
            object_id=int(r["object_id"]),
            masks={
                int(m["frame"]): rle.decode(m["rle"], sizes[k, j]) for j, m in enumerate(r["masks"])
            },
            label=str(r.get("label", "")),
        )
        for k, r in enumerate(regions)
    ]


# ------------------------------------------------------------------------------------------- answers


def encode_answer(ans: Answer) -> bytes:
    doc = {
        "text": ans.text,
        "token_ids": [int(t) for t in ans.token_ids],
        "token_logprobs": [float(v) for v in ans.token_logprobs],
        "value": ans.value,
        "unit": ans.unit,
        "option_index": ans.option_index,
        "masks": None if ans.masks is None else [None if m is None else rle.encode(m) for m in ans.masks],
        "mask_scores": ans.mask_scores,
        "source": ans.source,
        "task": ans.task,
        "reading": ans.reading,
        "object_ids": [int(i) for i in ans.object_ids],
        "frame_indices": [int(i) for i in ans.frame_indices],
        "timings": ans.timings,
        "reason": ans.reason,
    }
    return json.dumps(doc).encode()


def decode_answer(body: bytes, max_pixels: int | None = None) -> Answer:
    """An answer body; ``max_pixels`` bounds each mask (the client passes its largest frame's)."""
    doc = json.loads(body.decode())
    masks = doc.pop("masks")
    ans = Answer(**doc)
    if masks is not None:
        ans.masks = [None if m is None else rle.decode(m, max_pixels=max_pixels) for m in masks]
    return ans

"""The wire format between robots and the site server, shared by ``server`` and the ``remote`` backend.

Everything crosses as Triton tensors: raw uint8 pixels for frame uploads and UTF-8 JSON for requests
and answers (masks run-length encoded). Nothing is pickled, so a client can never make the server
execute code and vice versa.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from .types import Answer, Region, Request

FRAMES_MODEL = "rynnec_frames"
"""Upload model: stores frames under their wire keys, so questions refer to them by key."""
ASK_MODEL = "rynnec_ask"
"""Decoupled model: one request in, streamed ``token`` responses and one ``answer`` (or ``error``) out."""
TOKEN_HEADER = "triton-access-token"
"""HTTP header Triton itself checks when the server has a token (PyTriton's name for it)."""
GRPC_TOKEN_HEADER = "triton-grpc-protocol-" + TOKEN_HEADER
"""The same token as gRPC metadata: Triton prefixes restricted-protocol keys with the protocol name."""
OPS = ("answer", "segment", "score")

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
            f"--host {host} is reachable from other machines: pass --token (robots send it as "
            f"'{TOKEN_HEADER}') or bind to 127.0.0.1"
        )


def pixel_key(rgb: np.ndarray) -> str:
    """Content key for a frame without ``Frame.key``: identical pixels may share features across robots."""
    h = hashlib.blake2b(np.ascontiguousarray(rgb).data, digest_size=16)
    h.update(repr(rgb.shape).encode())
    return "px:" + h.hexdigest()


# --------------------------------------------------------------------------------------------- masks


def rle_encode(mask: np.ndarray) -> dict[str, Any]:
    """Run lengths of a boolean H×W mask in C order, starting with a (possibly empty) run of False."""
    flat = np.ascontiguousarray(mask, dtype=bool).ravel()
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    counts = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        counts = [0, *counts]
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": [int(c) for c in counts]}


def rle_decode(rle: dict[str, Any]) -> np.ndarray:
    """Inverse of ``rle_encode``; rejects counts that do not add up to the stated size."""
    h, w = (int(x) for x in rle["size"])
    counts = np.asarray(rle["counts"], dtype=np.int64)
    if (counts < 0).any() or int(counts.sum()) != h * w:
        raise ValueError(f"mask RLE counts sum to {int(counts.sum())}, expected {h}×{w}")
    values = np.arange(len(counts)) % 2 == 1
    return np.repeat(values, counts).reshape(h, w)


# ------------------------------------------------------------------------------------------ requests


def encode_request(op: str, request: Request, keys: Sequence[str], stream: bool) -> bytes:
    """The JSON body of an ``ASK_MODEL`` call; frames travel as keys of earlier uploads."""
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; one of {OPS}")
    regions = []
    for r in request.regions:
        masks = r.frame_masks(len(request.frames))
        regions.append(
            {
                "object_id": int(r.object_id),
                "label": r.label,
                "masks": [{"frame": i, "rle": rle_encode(m)} for i, m in sorted(masks.items())],
            }
        )
    doc = {
        "op": op,
        "question": request.question,
        "keys": list(keys),
        "regions": regions,
        "options": request.options,
        "task": request.task,
        "max_new_tokens": int(request.max_new_tokens),
        "stream": bool(stream),
    }
    return json.dumps(doc).encode()


def decode_request(body: bytes) -> dict[str, Any]:
    """Parse and type-check an ``ASK_MODEL`` body (the server never trusts its shape)."""
    doc = json.loads(body.decode())
    if not isinstance(doc, dict) or doc.get("op") not in OPS:
        raise ValueError(f"request op must be one of {OPS}")
    if not isinstance(doc.get("question"), str):
        raise ValueError("request question must be a string")
    keys = doc.get("keys")
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        raise ValueError("request keys must be a non-empty list of frame keys")
    if not isinstance(doc.get("max_new_tokens"), int):
        raise ValueError("request max_new_tokens must be an integer")
    return doc


def regions_from_wire(regions: list[dict[str, Any]]) -> list[Region]:
    return [
        Region(
            object_id=int(r["object_id"]),
            masks={int(m["frame"]): rle_decode(m["rle"]) for m in r["masks"]},
            label=str(r.get("label", "")),
        )
        for r in regions
    ]


# ------------------------------------------------------------------------------------------- answers


def encode_answer(ans: Answer) -> bytes:
    doc = {
        "text": ans.text,
        "token_ids": [int(t) for t in ans.token_ids],
        "value": ans.value,
        "unit": ans.unit,
        "option_index": ans.option_index,
        "masks": None if ans.masks is None else [None if m is None else rle_encode(m) for m in ans.masks],
        "mask_scores": ans.mask_scores,
        "source": ans.source,
        "task": ans.task,
        "object_ids": [int(i) for i in ans.object_ids],
        "frame_indices": [int(i) for i in ans.frame_indices],
        "timings": ans.timings,
        "reason": ans.reason,
    }
    return json.dumps(doc).encode()


def decode_answer(body: bytes) -> Answer:
    doc = json.loads(body.decode())
    masks = doc.pop("masks")
    ans = Answer(**doc)
    if masks is not None:
        ans.masks = [None if m is None else rle_decode(m) for m in masks]
    return ans

"""The one run-length codec for masks that cross a boundary: COCO RLE, decoded by pycocotools.

Every mask the package reads or writes is a COCO RLE ``{"size": [H, W], "counts": ...}``: ROS
``RegionMask``/``ObjectMask`` messages carry the compressed string, the site server's JSON and the
RynnEC-Bench / scene files carry the string or the uncompressed list of run lengths. Runs alternate from
a (possibly empty) run of zeros and go column by column (COCO's Fortran order, pycocotools' ``maskApi.c``).

pycocotools decodes without bounds checks: counts that do not add up to H·W read past its buffer, and a
declared 10^10-pixel size allocates 10 GB. So ``check`` reads the size and counts first — against the
frame's shape and a pixel budget, the compressed string parsed as ``rleFrString`` parses it — and only a
mask that passed it reaches pycocotools.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from pycocotools import mask as mask_utils

from rynnec_ros.core.types import RequestError


def as_int(value: Any, what: str) -> int:
    """``value`` if it is a JSON integer (not a bool, not a float); ValueError naming ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise RequestError(f"{what} must be an integer, got {describe(value)}")
    return int(value)


def describe(value: Any) -> str:
    """A short description of a caller's value for an error message (never the whole of a huge one)."""
    plain = isinstance(value, (str, int, float, bool, type(None)))
    text = json.dumps(value) if plain else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def encode(mask: np.ndarray) -> dict[str, Any]:
    """Boolean H×W mask -> COCO RLE with the compressed ``counts`` string, as RynnEC-Bench stores it."""
    if mask.ndim != 2:
        raise RequestError(f"mask must be 2-D, got shape {mask.shape}")
    rle = mask_utils.encode(np.asfortranarray(mask, dtype=np.uint8))
    return {"size": [int(rle["size"][0]), int(rle["size"][1])], "counts": rle["counts"].decode("ascii")}


def _string_total(counts: str, limit: int) -> int:
    """Pixels a compressed counts string covers, its runs parsed as pycocotools' ``rleFrString`` parses
    them (5 bits per character from '0', bit 0x20 continues, bit 0x10 of the last character signs, runs
    after the second stored as differences to the run two back). Stops as soon as they pass ``limit``."""
    runs: list[int] = []
    total, i = 0, 0
    while i < len(counts):
        value, shift, more = 0, 0, True
        while more:
            if i >= len(counts):
                raise RequestError("mask RLE counts string ends inside a run length")
            c = ord(counts[i]) - 48
            value |= (c & 0x1F) << (5 * shift)
            more = bool(c & 0x20)
            i += 1
            shift += 1
            if not more and c & 0x10:
                value |= -1 << (5 * shift)
        if len(runs) > 2:
            value += runs[-2]
        if value < 0:
            raise RequestError(f"mask RLE counts must not be negative, got {value}")
        total += value
        if total > limit:
            raise RequestError(f"mask RLE counts sum to more than {limit}")
        runs.append(value)
    return total


def check(rle: Any, shape: Sequence[int] | None = None, max_pixels: int | None = None) -> tuple[int, int]:
    """The H×W an RLE declares, checked before anything is allocated: the frame's ``shape`` when given,
    at most ``max_pixels`` pixels (None: no budget), and counts (a list of non-negative integers, or a
    compressed string of the characters '0'..'o') adding up to exactly H·W. ValueError naming the problem
    otherwise."""
    if not isinstance(rle, dict):
        raise RequestError(f"mask RLE must be an object with size and counts, got {describe(rle)}")
    size = rle.get("size")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise RequestError(f"mask RLE size must be [height, width], got {describe(size)}")
    h, w = (as_int(v, "mask RLE size") for v in size)
    if h < 1 or w < 1:
        raise RequestError(f"mask RLE size {h}×{w} is empty")
    if shape is not None and (h, w) != (int(shape[0]), int(shape[1])):
        raise RequestError(f"mask RLE size {h}×{w} is not its frame's {int(shape[0])}×{int(shape[1])}")
    if max_pixels is not None and h * w > max_pixels:
        raise RequestError(f"mask RLE size {h}×{w} = {h * w} pixels is over the budget of {max_pixels} "
                           "pixels")
    counts = rle.get("counts")
    if isinstance(counts, bytes):
        counts = counts.decode("ascii", errors="replace")
    if isinstance(counts, str):
        if not all(48 <= ord(c) < 48 + 64 for c in counts):
            raise RequestError("mask RLE counts string must be COCO compressed (characters '0'..'o')")
        total = _string_total(counts, h * w)
    elif isinstance(counts, (list, tuple)):
        if len(counts) > h * w + 1:  # at most one run per pixel, after the leading run of zeros
            raise RequestError(f"mask RLE has {len(counts)} runs, more than a {h}×{w} mask can have")
        total = 0
        for c in counts:
            run = as_int(c, "mask RLE counts")
            if run < 0:
                raise RequestError(f"mask RLE counts must not be negative, got {run}")
            total += run
    else:
        raise RequestError(f"mask RLE counts must be a list of run lengths or a COCO string, got "
                           f"{describe(counts)}")
    if total != h * w:
        raise RequestError(f"mask RLE counts sum to {total}, expected {h}×{w} = {h * w}")
    return h, w


def decode(rle: Any, shape: Sequence[int] | None = None, max_pixels: int | None = None) -> np.ndarray:
    """COCO RLE -> boolean H×W mask, after ``check`` (size, pixel budget, counts)."""
    h, w = check(rle, shape, max_pixels)
    counts = rle["counts"]
    if isinstance(counts, (list, tuple)):
        compact = mask_utils.frPyObjects({"size": [h, w], "counts": [int(c) for c in counts]}, h, w)
    else:
        compact = {"size": [h, w], "counts": counts.encode("ascii") if isinstance(counts, str) else counts}
    with warnings.catch_warnings():  # pycocotools' numpy-2 copy-keyword DeprecationWarning, not ours
        warnings.simplefilter("ignore", DeprecationWarning)
        return np.ascontiguousarray(mask_utils.decode(compact), dtype=bool)

"""What the engine checks of a ``Request`` before any compute: frame cache keys and region masks.

A caller's mistake (duplicate frame keys, a mask of the wrong size, a soft 0/255 mask, a region on a frame
the request does not hold) is a ``ValueError`` naming the region and frame, raised before the vision tower
runs, so a bad request costs nothing and never reaches the model half-checked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from rynnec_ros.core.types import Frame, Prompt, Region, RequestError


@dataclass
class FlatRegions:
    """A request's region masks flattened in ``<REGION>`` order, and what each object contributes."""

    masks: list[np.ndarray]
    frames: list[int]
    counts: list[int]
    object_ids: list[int]


def frame_keys(frames: Sequence[Frame]) -> list[Hashable]:
    """Cache keys: ``Frame.key`` where set (unique within a call), else a hash of the pixels."""
    keys: list[Hashable] = []
    seen: dict[Hashable, int] = {}
    for i, f in enumerate(frames):
        if f.key is None:
            h = hashlib.blake2b(np.ascontiguousarray(f.rgb).data, digest_size=16)
            h.update(repr(f.rgb.shape).encode())
            keys.append(("hash", h.hexdigest()))
            continue
        if not isinstance(f.key, Hashable):
            raise RequestError(f"frame {i}: key must be hashable, got {type(f.key).__name__}")
        if f.key in seen:
            # the cache would hand frame i the features of frame seen[key]
            raise RequestError(
                f"frame keys must be unique within a request: frames {seen[f.key]} and {i} "
                f"share the key {f.key!r}"
            )
        seen[f.key] = i
        keys.append(("key", f.key))
    return keys


def _region_masks(region: Region, r: int, n_frames: int) -> list[tuple[int, np.ndarray]]:
    """(frame index, mask) pairs of one region from any of the ``RegionMasks`` forms.

    In the per-frame forms (a sequence or an N×H×W array, N = number of frames) ``None`` or an
    all-false mask means "no mask on that frame"; in the dict form every entry must select pixels.
    """
    try:
        pairs = list(region.frame_masks(n_frames).items())
    except ValueError as exc:
        raise RequestError(f"region {r} ({exc})") from exc
    if not pairs and not isinstance(region.masks, dict):
        raise RequestError(f"region {r} (object {region.object_id}) has no mask on any frame")
    return pairs


def flatten_regions(frames: Sequence[Frame], regions: Sequence[Region]) -> FlatRegions:
    """Masks/frames in ``<REGION>`` order and the mask count per object.

    The engine writes the ``<REGION>`` tokens object by object, in the order of the regions (the
    K-th region is ``<objectK>``), each region's masks in the order given; a question that already
    holds the tokens consumes the masks in that same order.

    A mask with no pixel at frame size is an error (its region token would pool nothing). A
    non-empty mask that covers no patch once reduced to the coarse grid (a tiny object, see
    ``heads.mask_to_grid``) is accepted and pools a zero vector, as upstream inference does:
    rejecting it would break parity with the reference model.
    """
    out = FlatRegions([], [], [], [])
    for r, region in enumerate(regions):
        if not isinstance(region, Region):
            raise RequestError(f"region {r} must be a rynnec_ros.core.types.Region, "
                               f"got {type(region).__name__}")
        pairs = _region_masks(region, r, len(frames))
        if not pairs:
            raise RequestError(f"region {r} (object {region.object_id}) has no masks")
        for fi, m in pairs:
            what = f"region {r} (object {region.object_id}), frame {fi!r}"
            # bool is an int subclass: True would silently mean frame 1
            if isinstance(fi, (bool, np.bool_)) or not isinstance(fi, (int, np.integer)):
                raise RequestError(f"{what}: frame index must be an integer")
            if not 0 <= int(fi) < len(frames):
                raise RequestError(f"{what}: frame index out of range for {len(frames)} frames")
            m = np.asarray(m)
            if m.ndim != 2:
                raise RequestError(f"{what}: mask must be a 2-D H×W array, got shape {m.shape}")
            fh, fw = frames[int(fi)].rgb.shape[:2]
            if m.shape != (fh, fw):
                raise RequestError(f"{what}: mask is {m.shape[1]}×{m.shape[0]} but the frame is {fw}×{fh}")
            out.masks.append(_bool_mask(m, what))
            out.frames.append(int(fi))
        out.counts.append(len(pairs))
        out.object_ids.append(int(region.object_id))
    return out


def _bool_mask(mask: np.ndarray, what: str) -> np.ndarray:
    """Boolean mask, refusing what a plain cast would misread (soft masks, 0/255 images, empty masks)."""
    if mask.dtype != np.bool_:
        if mask.dtype.kind not in "iuf":
            raise RequestError(f"{what}: mask must be boolean or numeric 0/1, got dtype {mask.dtype}")
        binary = (mask == 0) | (mask == 1)
        if not binary.all():
            bad = mask[~binary].flat[0].item()
            raise RequestError(
                f"{what}: mask is {mask.dtype} with values other than 0 and 1 (e.g. {bad!r}); "
                "pass a boolean mask (threshold soft or 0/255 masks first)"
            )
        mask = mask.astype(bool)
    if not mask.any():
        raise RequestError(f"{what}: mask is empty, it selects no pixel of its frame")
    return mask


def check_prompt(prompt: Prompt, frames: Sequence[Frame], what: str) -> tuple[np.ndarray, np.ndarray]:
    """(points [N, 2] float32 frame pixels, labels [N] int64) of a region's prompt, a box first as the two
    corners labelled 2 and 3 (SAM 2's image predictor's order), or ``ValueError`` naming ``what`` and
    what is wrong with it."""
    fi = prompt.frame
    if isinstance(fi, (bool, np.bool_)) or not isinstance(fi, (int, np.integer)):
        raise RequestError(f"{what}: frame must be an integer index, got {fi!r}")
    if not 0 <= int(fi) < len(frames):
        raise RequestError(f"{what}: frame {fi} out of range for {len(frames)} frames")
    h, w = frames[int(fi)].rgb.shape[:2]
    points = np.zeros((0, 2))
    if len(prompt.points):
        points = np.asarray(prompt.points, dtype=np.float64).reshape(-1, 2)
    labels = np.asarray(prompt.labels)
    if len(labels) != len(points):
        raise RequestError(f"{what}: {len(points)} points but {len(labels)} labels")
    if labels.size and not np.isin(labels, (0, 1)).all():
        raise RequestError(f"{what}: point labels must be 1 (on the object) or 0 (not on it), "
                           f"got {labels.tolist()}")
    if prompt.box is not None:
        box = np.asarray(prompt.box, dtype=np.float64)
        if box.shape != (4,):
            raise RequestError(f"{what}: box must be (x0, y0, x1, y1), got {prompt.box!r}")
        if not (box[0] < box[2] and box[1] < box[3]):
            raise RequestError(f"{what}: box {box.tolist()} must have x0 < x1 and y0 < y1")
        points = np.concatenate([box.reshape(2, 2), points])
        labels = np.concatenate([[2, 3], labels])
    if not len(points):
        raise RequestError(f"{what}: give at least one point or a box")
    if not np.isfinite(points).all():
        raise RequestError(f"{what}: coordinates must be finite numbers")
    outside = (points[:, 0] < 0) | (points[:, 0] > w) | (points[:, 1] < 0) | (points[:, 1] > h)
    if outside.any():
        raise RequestError(f"{what}: {points[outside].tolist()} lie outside the {w}×{h} frame {fi}")
    if (labels == 1).sum() == 0 and prompt.box is None:
        raise RequestError(f"{what}: needs a point on the object (label 1) or a box")
    return points.astype(np.float32), labels.astype(np.int64)

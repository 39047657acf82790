"""Service/action messages <-> Request/Answer: the only place that knows both shapes.

A request message becomes one ``Request`` (frames from the buffer, regions with their masks keyed by
frame index, sanitised text) and an ``Answer`` fills the response; nothing is flattened in between.
Every problem with what the client sent is a ValueError whose text goes back as the response message.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from std_msgs.msg import Header

from rynnec_ros.core import masks as rle_codec
from rynnec_ros.core.buffer import NS_PER_S, FrameBuffer
from rynnec_ros.core.text import check_text as _check_text
from rynnec_ros.core.types import Answer, Frame, Prompt, Region, Request, RequestError, WorldPoint
from rynnec_ros.core.wire import MAX_MASKS_PER_REGION, MAX_NEW_TOKENS, MAX_OPTIONS, MAX_REGIONS
from rynnec_ros.model.requests import check_prompt
from rynnec_ros.msg import ObjectMask, StageTiming
from rynnec_ros.ros import convert
from rynnec_ros.ros.params import NodeParams
from rynnec_ros.spatial.prompts import point_prompts

MAX_STAMPS = 1000

PoseLookup = Callable[[Frame], np.ndarray | None]
FrameLookup = Callable[[str, int], np.ndarray]
"""world_T_frame of a TF frame at a stamp (ns); LookupError with the reason when TF cannot say."""


@dataclass(frozen=True)
class Limits:
    """The parameters a request is checked against (read once per request)."""

    max_chars: int
    max_frames: int
    sample_fps: float
    tolerance_ns: int
    max_new_tokens: int
    track_window: bool = False  # track_window or track_objects: follow masks over the whole window
    block_frames: int = 0  # live_window_block_frames: the recent window for questions without stamps


def check_text(text: str, what: str, limit: int, optional: bool = False) -> str:
    return _check_text(text, what, limit, optional, limit_name="max_question_chars")


def limits_from(p: NodeParams) -> Limits:
    b = p.buffer
    return Limits(
        max_chars=p.requests.max_question_chars, max_frames=b.max_frames_per_query, sample_fps=b.sample_fps,
        tolerance_ns=int(b.stamp_tolerance_s * NS_PER_S), max_new_tokens=p.requests.max_new_tokens,
        track_window=p.prompts.track_window or p.prompts.track_objects,
        block_frames=b.live_window_block_frames,
    )


def _stamp(stamp: Any, what: str) -> int:
    try:
        return convert.stamp_to_ns(stamp)
    except ValueError as exc:
        raise RequestError(f"{what}: {exc}") from exc


MAX_TIMEOUT_S = 86400.0  # a request's own timeout_s: the request_timeout_s parameter's upper bound


def request_timeout(msg: Any, default_s: float) -> float:
    """The request's deadline in seconds: its own ``timeout_s`` when shorter than the node's
    ``default_s`` (request_timeout_s, the operator's bound), else ``default_s`` (also for 0).

    Never raises, so a job (and an accepted goal's result) always exists: an invalid value is reported
    by ``_window`` when the request is built, with the reason.
    """
    value = float(msg.timeout_s)
    return min(value, default_s) if math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S else default_s


def _window(msg: Any, buffer: FrameBuffer, lim: Limits, required: list[int], pose: PoseLookup) -> list[Frame]:
    timeout = float(msg.timeout_s)
    if not (math.isfinite(timeout) and 0 <= timeout <= MAX_TIMEOUT_S):
        raise RequestError(f"timeout_s {timeout} must be 0 (the node's request_timeout_s) or in (0, "
                           f"{MAX_TIMEOUT_S:.0f}] seconds")
    if len(msg.frame_stamps) > MAX_STAMPS:
        raise RequestError(f"{len(msg.frame_stamps)} frame stamps, at most {MAX_STAMPS} are accepted")
    if msg.max_frames < 0:
        raise RequestError(f"max_frames {msg.max_frames} is negative")
    max_frames = int(msg.max_frames) or lim.max_frames
    start = _stamp(msg.window_start, "window_start") or None
    end = _stamp(msg.window_end, "window_end") or None
    if start and end and start > end:
        raise RequestError(f"window_start {start} ns is after window_end {end} ns")
    frames = buffer.select(
        stamps_ns=[_stamp(s, f"frame_stamps[{i}]") for i, s in enumerate(msg.frame_stamps)],
        start_ns=start, end_ns=end, fps=lim.sample_fps, max_frames=max_frames, required_ns=required,
        tolerance_ns=lim.tolerance_ns, block_frames=lim.block_frames if start is None and end is None else 0,
    )
    for f in frames:  # copies: the pose belongs to this request only
        f.world_T_camera = pose(f)
    return frames


def _decode_mask(rm: Any, where: str, shape: tuple[int, ...]) -> np.ndarray:
    """A RegionMask's mask; an RLE is checked against its frame's ``shape`` before it is allocated."""
    try:
        if rm.counts:
            return rle_codec.decode({"size": list(rm.size), "counts": rm.counts}, shape)
        if len(rm.image.data):
            return convert.mono8_to_mask(rm.image)
    except ValueError as exc:
        raise RequestError(f"{where}: {exc}") from exc
    raise RequestError(f"{where}: has neither RLE counts nor a mono8 image")


MAX_CLICKS = 64  # clicks in one region's prompt


@dataclass
class _Decoded:
    """One request region as read from its message, before the window is chosen: masks or a prompt,
    keyed by buffered frame stamps (the window's frame indices are not known yet)."""

    object_id: int
    label: str
    masks: dict[int, np.ndarray]
    click: tuple[int, Prompt] | None = None  # (frame stamp, the prompt with frame -1)
    point: WorldPoint | None = None


def _regions(msg_regions: Any, buffer: FrameBuffer, lim: Limits) -> list[_Decoded]:
    if len(msg_regions) > MAX_REGIONS:
        raise RequestError(f"{len(msg_regions)} regions, at most {MAX_REGIONS} are accepted")
    out = []
    for k, region in enumerate(msg_regions):
        label = check_text(region.label, f"region {k} label", lim.max_chars, optional=True)
        decoded = _Decoded(int(region.object_id), label, {})
        out.append(decoded)
        prompt = region.prompt
        has_prompt = bool(len(prompt.points) or len(prompt.labels) or len(prompt.box)
                          or prompt.point.header.frame_id)
        if region.masks and has_prompt:
            raise RequestError(f"region {k} (object_id {region.object_id}) has masks and a prompt; give one")
        if not region.masks and not has_prompt:
            raise RequestError(f"region {k} (object_id {region.object_id}) has no masks and no prompt")
        if has_prompt:
            _decode_prompt(prompt, decoded, buffer, lim, f"region {k} prompt")
            continue
        if len(region.masks) > MAX_MASKS_PER_REGION:
            raise RequestError(f"region {k} has {len(region.masks)} masks, at most {MAX_MASKS_PER_REGION}")
        for j, rm in enumerate(region.masks):
            where = f"region {k} mask {j}"
            stamp = _stamp(rm.stamp, where)
            frame = buffer.get(stamp, lim.tolerance_ns)
            if frame is None:
                raise RequestError(f"{where}: stamp {stamp} ns is not a buffered frame")
            mask = _decode_mask(rm, where, frame.rgb.shape[:2])
            if mask.shape != frame.rgb.shape[:2]:
                raise RequestError(f"{where}: mask is {mask.shape[1]}x{mask.shape[0]} but the frame at "
                                   f"{stamp} ns is {frame.rgb.shape[1]}x{frame.rgb.shape[0]}")
            if not mask.any():
                raise RequestError(f"{where}: mask is empty")
            decoded.masks[frame.stamp_ns] = mask
    return out


def _decode_prompt(prompt: Any, out: _Decoded, buffer: FrameBuffer, lim: Limits, where: str) -> None:
    """A RegionPrompt: clicks/box on a buffered frame, or a 3D point (exactly one of the two)."""
    clicks = len(prompt.points) or len(prompt.labels) or len(prompt.box)
    if prompt.point.header.frame_id:
        if clicks:
            raise RequestError(f"{where}: give pixel prompts or a 3D point (point.header.frame_id), not both")
        p = prompt.point.point
        xyz = (float(p.x), float(p.y), float(p.z))
        if not all(math.isfinite(v) for v in xyz):
            raise RequestError(f"{where}: point {xyz} is not finite")
        frame_id = check_text(prompt.point.header.frame_id, f"{where} frame_id", lim.max_chars)
        out.point = WorldPoint(xyz, frame_id, _stamp(prompt.point.header.stamp, f"{where} point stamp"))
        return
    if len(prompt.points) > MAX_CLICKS:
        raise RequestError(f"{where}: {len(prompt.points)} clicks, at most {MAX_CLICKS}")
    if len(prompt.box) not in (0, 4):
        raise RequestError(f"{where}: box has {len(prompt.box)} numbers; give [x0, y0, x1, y1] or none")
    stamp = _stamp(prompt.stamp, f"{where} stamp")
    frame = buffer.get(stamp, lim.tolerance_ns) if stamp else buffer.newest()
    if frame is None:
        raise RequestError(f"{where}: stamp {stamp} ns is not a buffered frame" if stamp
                           else f"{where}: no frame is buffered yet")
    box = tuple(float(v) for v in prompt.box) if len(prompt.box) else None
    click = Prompt(-1, tuple((float(q.x), float(q.y)) for q in prompt.points),
                   tuple(int(v) for v in prompt.labels), box)  # type: ignore[arg-type]
    check_prompt(dataclasses.replace(click, frame=0), [frame], where)
    out.click = (frame.stamp_ns, click)


def ask_request(msg: Any, buffer: FrameBuffer, lim: Limits, pose: PoseLookup,
                locate: FrameLookup | None = None) -> Request:
    """AskQuestion.Request (or the Ask action goal) -> Request over buffered frames.

    ``locate`` moves a region's 3D point into the world frame (the node's TF); without it (the quick
    check before queueing) a point region stays a ``WorldPoint`` with no prompts.
    """
    question = check_text(msg.question, "question", lim.max_chars)
    if len(msg.options) > MAX_OPTIONS:
        raise RequestError(f"{len(msg.options)} options, at most {MAX_OPTIONS} are accepted")
    options = [check_text(o, f"option {i}", lim.max_chars) for i, o in enumerate(msg.options)] or None
    task = check_text(msg.task, "task", lim.max_chars, optional=True) or None
    if not 0 <= msg.max_new_tokens <= MAX_NEW_TOKENS:
        raise RequestError(f"max_new_tokens {msg.max_new_tokens} is more than the limit {MAX_NEW_TOKENS}")
    decoded = _regions(msg.regions, buffer, lim)
    required = {s for d in decoded for s in d.masks} | {d.click[0] for d in decoded if d.click}
    frames = _window(msg, buffer, lim, sorted(required), pose)
    index = {f.stamp_ns: i for i, f in enumerate(frames)}
    regions = []
    for k, d in enumerate(decoded):
        for s in [*d.masks, *([d.click[0]] if d.click else [])]:
            # Ingest may reset or evict the buffer between decoding the masks and picking the window.
            shape = d.masks[s].shape if s in d.masks else None
            if s not in index or (shape is not None and frames[index[s]].rgb.shape[:2] != shape):
                what = "a region mask" if s in d.masks else f"region {k}'s prompt"
                raise RequestError(f"the frame at {s} ns carrying {what} left the buffer while the request "
                                   "was prepared (time jump or eviction); send the request again")
        region = Region(d.object_id, {index[s]: m for s, m in d.masks.items()}, d.label, point=d.point)
        if d.click is not None:
            region.prompts = (dataclasses.replace(d.click[1], frame=index[d.click[0]]),)
        elif d.point is not None and locate is not None:
            region.prompts = _point_prompts(d.point, frames, locate, f"region {k}'s point")
        regions.append(region)
    max_new = int(msg.max_new_tokens) or lim.max_new_tokens
    return Request(question, frames, regions, options, task, max_new, _follow_over(frames, buffer, lim))


def _follow_over(frames: list[Frame], buffer: FrameBuffer, lim: Limits) -> list[Frame]:
    """``track_window``: every buffered frame from the request's first frame to its last (the frames
    it uses are the same copies, so the engine can find them by stamp); else none."""
    if not lim.track_window or not frames:
        return []
    chosen = {f.stamp_ns: f for f in frames}
    return [chosen.get(f.stamp_ns, f) for f in buffer.between(frames[0].stamp_ns, frames[-1].stamp_ns)]


def _point_prompts(point: WorldPoint, frames: list[Frame], locate: FrameLookup,
                   what: str) -> tuple[Prompt, ...]:
    """Clicks for a 3D point on the frames whose depth shows it (``spatial.prompts``)."""
    stamp = point.stamp_ns or frames[-1].stamp_ns
    try:
        world_T_point = locate(point.frame_id, stamp)
    except (LookupError, ValueError) as exc:
        raise RequestError(f"{what}: no transform from '{point.frame_id}' to the world frame: {exc}") from exc
    xyz = world_T_point[:3, :3] @ np.asarray(point.xyz) + world_T_point[:3, 3]
    name = f"{what} ({', '.join(f'{v:.3f}' for v in point.xyz)}) in '{point.frame_id}'"
    return point_prompts(xyz, frames, name)


def segment_request(msg: Any, buffer: FrameBuffer, lim: Limits, pose: PoseLookup) -> Request:
    expression = check_text(msg.expression, "expression", lim.max_chars)
    frames = _window(msg, buffer, lim, [], pose)
    return Request(expression, frames, max_new_tokens=lim.max_new_tokens,
                   window=_follow_over(frames, buffer, lim))


def timings(values: dict[str, float]) -> list[StageTiming]:
    return [StageTiming(stage=k, seconds=float(v)) for k, v in values.items()]


def fill_ask(res: Any, ans: Answer, request: Request) -> Any:
    res.answer = ans.text
    res.has_value = ans.value is not None and math.isfinite(ans.value)
    res.value = float(ans.value) if ans.value is not None and res.has_value else math.nan
    res.unit = ans.unit or ""
    res.option_index = -1 if ans.option_index is None else int(ans.option_index)
    res.option_probabilities = [float(p) for p in ans.option_probabilities]
    res.mean_token_logprob = math.nan if ans.mean_token_logprob is None else float(ans.mean_token_logprob)
    res.min_token_logprob = math.nan if ans.min_token_logprob is None else float(ans.min_token_logprob)
    res.uncertainty = math.nan if ans.uncertainty is None else float(ans.uncertainty)
    res.uncertainty_unit = ans.uncertainty_unit if ans.uncertainty is not None else ""
    res.margin_m = math.nan if ans.margin_m is None else float(ans.margin_m)
    res.source = ans.source
    res.task = ans.task or ""
    res.reading = ans.reading
    res.reason = ans.reason
    res.frame_stamps = [convert.ns_to_stamp(f.stamp_ns) for f in request.frames]
    res.region_masks = region_masks(ans, request)
    prompted = sorted({p.frame for r in ans.prompted for p in r.prompts})
    res.region_prompt_stamps = [convert.ns_to_stamp(request.frames[i].stamp_ns) for i in prompted]
    res.timings = timings(ans.timings)
    return res


def object_masks(ans: Answer, request: Request, object_id: int) -> list[ObjectMask]:
    """One ObjectMask per frame the engine segmented, stamped and framed like that frame; with the
    masks followed over the request's window, one per window frame SAM 2 found the object on (the
    decoder's predicted IoU as the score on the frames it decoded, NaN on the frames followed to)."""
    if not ans.masks:
        raise RequestError(f"no mask: {ans.reason or 'the model did not segment anything'} "
                           f"(model text: {ans.text!r})")
    scores = ans.mask_scores or []
    if ans.followed is not None:
        decoded = {f.stamp_ns: float(scores[i]) for i, f in enumerate(request.frames) if i < len(scores)}
        return [object_mask(request.window[w], mask, object_id, request.question,
                             decoded.get(request.window[w].stamp_ns, math.nan))
                for w, mask in sorted(ans.followed.masks.items())]
    return [object_mask(request.frames[i], mask, object_id, request.question,
                           float(scores[i]) if i < len(scores) else math.nan)
            for i, mask in enumerate(ans.masks[: len(request.frames)]) if mask is not None]


def region_masks(ans: Answer, request: Request) -> list[ObjectMask]:
    """The masks SAM 2 made of the prompted regions, one per frame (per window frame when followed over
    the request's window), labelled like their region."""
    return [object_mask(frame, np.asarray(mask, dtype=bool), r.object_id, r.label, math.nan)
            for r in ans.prompted for frame, mask in _region_frames(r, request)]


def _region_frames(region: Region, request: Request) -> list[tuple[Frame, np.ndarray]]:
    if region.followed is not None and request.window:
        return [(request.window[w], m) for w, m in sorted(region.followed.masks.items())]
    return [(request.frames[i], m) for i, m in sorted(region.frame_masks(len(request.frames)).items())]


def object_mask(frame: Frame, mask: np.ndarray, object_id: int, label: str, score: float) -> ObjectMask:
    """An ObjectMask of ``mask`` on ``frame``: its stamp and frame_id, COCO RLE, pixel box."""
    if mask.shape != frame.rgb.shape[:2]:
        raise RuntimeError(f"engine returned a {mask.shape} mask for a {frame.rgb.shape[:2]} frame")
    rle = rle_codec.encode(mask)
    return ObjectMask(header=Header(stamp=convert.ns_to_stamp(frame.stamp_ns), frame_id=frame.frame_id),
                      object_id=object_id, label=label, size=rle["size"], counts=rle["counts"],
                      bbox=convert.mask_bbox(mask), score=score)


def fill_segment(res: Any, ans: Answer, request: Request, object_id: int) -> Any:
    res.answer = ans.text
    res.frame_stamps = [convert.ns_to_stamp(f.stamp_ns) for f in request.frames]
    res.timings = timings(ans.timings)
    res.masks = object_masks(ans, request, object_id)
    return res

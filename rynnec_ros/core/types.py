"""Plain data passed between the layers: message -> buffer -> Request -> engine/geometry -> Answer.

Nothing here imports ROS or torch, so the node, the CLI, the benchmarks and the evaluation harness
all speak the same types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias

import numpy as np

NS_PER_S = 1_000_000_000  # stamps are integer nanoseconds everywhere


@dataclass
class Frame:
    """One buffered camera frame with the optional geometry that came with it.

    ``rgb`` is H×W×3 uint8; ``depth`` is metres (float32, NaN where unknown) registered to ``rgb``;
    ``K`` the 3×3 colour intrinsics; ``world_T_camera`` the 4×4 pose of the optical frame in a
    gravity-aligned world frame (z up) when TF provided one. ``key`` is the cache key an engine may
    store this frame's features under (the buffer sets a fresh one per insertion, so a new image at a
    re-sent stamp never hits stale features); ``None`` makes the engine hash the pixels instead.
    """

    rgb: np.ndarray
    stamp_ns: int = 0
    frame_id: str = ""
    depth: np.ndarray | None = None
    K: np.ndarray | None = None
    world_T_camera: np.ndarray | None = None
    key: Hashable | None = None


RegionMasks: TypeAlias = dict[int, np.ndarray] | Sequence[np.ndarray | None] | np.ndarray
"""A region's masks: {frame index: mask}, or one entry per request frame (a sequence with ``None``
where the object has no mask, or an N×H×W array whose all-false slices mean "no mask there")."""


@dataclass(frozen=True)
class Prompt:
    """Where an object is on one frame when no mask is at hand: clicks and/or a box (SAM 2's prompts).

    ``points`` are (x, y) = (column, row) pixel coordinates on frame ``frame`` (an index into
    ``Request.frames``), the convention of SAM 2's image predictor (it shifts them to the pixel's centre);
    each has a label in ``labels``: 1 on the object, 0 not on it. ``box`` is (x0, y0, x1, y1) around it.
    """

    frame: int
    points: Sequence[tuple[float, float]] = ()
    labels: Sequence[int] = ()
    box: tuple[float, float, float, float] | None = None


@dataclass(frozen=True)
class WorldPoint:
    """A 3D point on an object in a TF frame (RViz's /clicked_point, a planner's target), for the ROS
    layer to move into the world frame and click on the frames that see it (``spatial.prompts``)."""

    xyz: tuple[float, float, float]
    frame_id: str
    stamp_ns: int = 0  # 0: the newest frame's stamp


@dataclass
class Followed:
    """An object followed by SAM 2's video memory through ``Request.window``: its mask on every window
    frame SAM 2 found it on (window index → boolean H×W mask at that frame's size). ``state`` is the
    tracker's memory, to go on following it as frames arrive (``Predictor.follow``); opaque here, and
    never sent over a wire."""

    masks: dict[int, np.ndarray]
    held_bytes: int = 0
    state: object = field(default=None, repr=False, compare=False)


@dataclass
class Region:
    """An object referred to by masks on some of the request's frames, or by prompts on some.

    ``masks`` maps a frame index (into ``Request.frames``) to a boolean H×W mask at that frame's size;
    the engine also takes the per-frame forms of ``RegionMasks`` (the way upstream's API passes masks).
    ``prompts`` (at most one per frame) with no masks ask the engine to segment the object with SAM 2
    first (``Predictor.resolve_prompts``); with masks they say where those masks came from. ``point``
    is where the prompts came from when the caller gave a 3D point.
    """

    object_id: int
    masks: RegionMasks
    label: str = ""
    prompts: tuple[Prompt, ...] = ()
    point: WorldPoint | None = None
    followed: Followed | None = None
    """A prompted object's masks on ``Request.window`` (set by ``resolve_prompts`` when it has one)."""

    @property
    def unresolved(self) -> bool:
        """Given by prompts only: the masks are still to be made."""
        return bool(self.prompts) and not (self.masks is not None and len(self.masks))

    def frame_masks(self, n_frames: int) -> dict[int, np.ndarray]:
        """{frame index: mask} from any ``RegionMasks`` form, in the order given.

        In the per-frame forms (a sequence or an N×H×W array, N = ``n_frames``) ``None`` or an all-false
        mask means "no mask on that frame"; the dict form is returned as it is.
        """
        masks = self.masks
        if isinstance(masks, dict):
            return dict(masks)
        if isinstance(masks, np.ndarray) and masks.ndim != 3:
            raise ValueError(f"object {self.object_id}: a mask array must be N×H×W (one per frame), got "
                             f"shape {masks.shape}")
        if len(masks) != n_frames:
            raise ValueError(f"object {self.object_id}: {len(masks)} per-frame masks for {n_frames} frames")
        return {i: np.asarray(m) for i, m in enumerate(masks) if m is not None and np.asarray(m).any()}


@dataclass
class Request:
    """A question about a window of frames, optionally about regions and with answer options."""

    question: str
    frames: list[Frame]
    regions: list[Region] = field(default_factory=list)
    options: list[str] | None = None
    task: str | None = None
    max_new_tokens: int = 128
    window: list[Frame] = field(default_factory=list)
    """Every buffered frame of the window, oldest first (``frames`` are among them): when given, masks
    are followed over all of them with SAM 2's video memory, not only over the frames the model read
    (``Region.followed``, ``Answer.followed``)."""

    def window_index(self, frame: int) -> int:
        """The index in ``window`` of ``frames[frame]`` (same stamp)."""
        stamp = self.frames[frame].stamp_ns
        for i, f in enumerate(self.window):
            if f.stamp_ns == stamp:
                return i
        raise ValueError(f"frame {frame} (stamp {stamp} ns) is not in the request's window")


@dataclass(frozen=True)
class ObjectBox:
    """The oriented box the geometry measured for one object (what an answer's value came from).

    ``center`` (metres) and ``orientation`` (quaternion x, y, z, w of the box's axes: length, width,
    height) are in ``frame_id``; "" is the request's world frame, the gravity-aligned frame its frames'
    ``world_T_camera`` poses are in (the node's ``world_frame``). Without poses the box is in the last
    frame's camera frame (that frame's ``frame_id``), its height axis along gravity as the floor gave
    it. ``size`` is (length, width, height): the long and short sides of the horizontal footprint and
    the vertical extent, as the answers define them; ``yaw`` is the length axis's heading about gravity
    (radians in [-π/2, π/2), about the world z when posed). ``object_id`` is the region's own id.
    """

    object_id: int
    label: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float
    frame_id: str = ""
    orientation: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 1.0)


@dataclass
class Answer:
    """What the engine or the geometry returns; the node turns it into a service response.

    ``value``/``unit`` are set when the answer is a quantity, ``option_index`` when it picks one of
    the request's options, ``masks`` (one boolean H×W array per frame, ``None`` for frames without a
    mask) for segmentation. ``timings`` holds seconds per stage (``vision``, ``prefill``, ``decode``,
    ``sam2``, ...). ``reason`` explains why a quantity could not be determined.
    ``option_probabilities`` (one per option, summing to 1) is set when the model chose among options by
    their likelihood. ``token_logprobs`` (one per ``token_ids``) are the model's natural-log probabilities
    of the tokens it generated, from its raw next-token distribution: their mean and minimum
    (``mean_token_logprob``/``min_token_logprob``: derived here from the list, or set from a response
    that carries only them, as the ROS client's) say how sure a free answer is (empty / None for
    geometric and option answers); ``confidence`` folds them into one number. ``boxes`` holds the box of
    every object a geometric answer measured (in the order the question names them, subject first), for
    drawing what the answer is about. ``reading`` is the structured task the geometry answered, every slot
    and the objects spelled out (``spatial.plan.Parsed.reading``), so a caller sees which reading was used.
    A geometric answer carries its ``uncertainty``: the standard uncertainty (one standard deviation, in
    ``uncertainty_unit``) of its value, or, for a choice or yes/no, of ``margin_m``, how far (metres) its
    deciding quantity is from the decision boundary (docs/spatial.md, "Uncertainty"); None when it has no
    estimate (model answers; a walked distance, since poses carry no covariance).
    """

    text: str
    token_ids: list[int] = field(default_factory=list)
    token_logprobs: list[float] = field(default_factory=list)
    value: float | None = None
    unit: str | None = None
    option_index: int | None = None
    option_probabilities: list[float] = field(default_factory=list)
    masks: list[np.ndarray | None] | None = None
    mask_scores: list[float] | None = None
    source: str = "model"
    task: str | None = None
    reading: str = ""
    object_ids: list[int] = field(default_factory=list)
    frame_indices: list[int] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    reason: str = ""
    boxes: list[ObjectBox] = field(default_factory=list)
    mean_token_logprob: float | None = None
    min_token_logprob: float | None = None
    uncertainty: float | None = None
    uncertainty_unit: str = ""
    margin_m: float | None = None
    prompted: list[Region] = field(default_factory=list)
    """The regions given as prompts, with the masks SAM 2 made of them: what the answer was about."""
    followed: Followed | None = None
    """A segmentation's masks followed over ``Request.window`` (when the request has one)."""

    def __post_init__(self) -> None:
        if self.token_logprobs and self.mean_token_logprob is None:
            self.mean_token_logprob = sum(self.token_logprobs) / len(self.token_logprobs)
        if self.token_logprobs and self.min_token_logprob is None:
            self.min_token_logprob = min(self.token_logprobs)

    @property
    def confidence(self) -> float | None:
        """One number in [0, 1] for a planner's threshold, or None when the answer carries none: the chosen
        option's probability when the model chose among options; for a geometric choice or yes/no, the
        probability that its deciding quantity lies on the side it was measured on, Φ(margin / σ) with
        Gaussian errors (1 when σ is 0); else the geometric-mean probability of the generated tokens
        (``exp(mean_token_logprob)``). Geometric quantities carry an ``uncertainty`` instead."""
        if self.option_probabilities and self.option_index is not None:
            return float(self.option_probabilities[self.option_index])
        if self.margin_m is not None and self.uncertainty is not None and self.uncertainty_unit == "m":
            if self.uncertainty <= 0:
                return 1.0
            return 0.5 * (1.0 + math.erf(self.margin_m / (self.uncertainty * math.sqrt(2.0))))
        if self.mean_token_logprob is not None and math.isfinite(self.mean_token_logprob):
            return math.exp(self.mean_token_logprob)
        return None


class RequestError(ValueError):
    """What the caller sent or asked for cannot be answered (a malformed field, a frame that is not
    buffered, a prompt on no object, a question the geometry was told to answer but cannot): the message
    is the reason the caller gets. Anything else that fails while answering is a fault of ours, reported
    as an internal error and logged. A ValueError, so checks that predate it still read as refusals."""


class Cancelled(Exception):
    """A request was stopped by its ``should_stop`` callback (between prefill chunks, layers or tokens)."""


TokenFn = Callable[[str], None]
StopFn = Callable[[], bool]


@dataclass(frozen=True)
class EngineInfo:
    """What answers, once built: its backend and what every exported graph runs on.

    ONNX Runtime may fall back to another provider without failing, so ``graph_providers`` is read from
    the sessions, not from the configuration (empty for eager torch).
    """

    backend: str
    graph_providers: dict[str, str] = field(default_factory=dict)


class Predictor(Protocol):
    """What answers a ``Request``: the engine on any backend, or a client of the running node.

    ``on_token`` receives the answer text piece by piece; ``should_stop`` is polled during the work and
    makes the call raise ``Cancelled`` when it returns true. ``info`` says what it runs on.
    """

    info: EngineInfo

    def answer(
        self, request: Request, *, on_token: TokenFn | None = None, should_stop: StopFn | None = None
    ) -> Answer: ...

    def segment(
        self, request: Request, *, on_token: TokenFn | None = None, should_stop: StopFn | None = None
    ) -> Answer: ...

    def score_options(self, request: Request, *, should_stop: StopFn | None = None) -> list[float]: ...

    def resolve_prompts(self, request: Request) -> Request:
        """``request`` with every region given by prompts only holding the masks made of them (prompts
        kept); ``ValueError`` naming the region when a prompt is bad or finds nothing."""
        ...

    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        """The mask on ``frame`` (the next frame) of an object this predictor followed through a window;
        ``ValueError`` when it cannot follow objects (not a local torch engine with the sam2 package)."""
        ...

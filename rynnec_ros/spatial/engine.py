"""``SpatialEngine``: answers RynnEC spatial questions geometrically from depth, K, poses and masks.

"Me" is the camera at the last frame of the request's window. With poses (``Frame.world_T_camera``
in a gravity-aligned, z-up world frame) every masked frame contributes points; without poses only
the last frame can be used, and gravity comes from the floor plane found around the camera-up
prior (−y of the optical frame), as in the RynnEC data pipeline.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from rynnec_ros.core.lru import LRU
from rynnec_ros.core.types import Answer, Frame, ObjectBox, Request, RequestError
from rynnec_ros.spatial.ground import GroundParams, Plane, choose_ground, detect_planes, rotation_aligning
from rynnec_ros.spatial.parse import NOT_MEASURABLE
from rynnec_ros.spatial.plan import (
    SpatialPlan,
    Unanswerable,
    claim_check,
    parse_question,
    parse_structured,
    resolve_objects,
    solve,
)
from rynnec_ros.spatial.points import (
    FUSED_MAX_POINTS,
    ObjectGeometry,
    PointParams,
    backproject,
    object_points_in_frame,
    ray_moment,
    summarise,
    transform,
    valid_depth,
    validate_K,
    validate_pose,
)
from rynnec_ros.spatial.solvers import Scene, Undeterminable
from rynnec_ros.spatial.support import remove_support_points, rest_on_support


@dataclass
class SpatialParams:
    """Geometry settings; ``arm_length_m`` decides reachability.

    ``ground_from_world_origin``: when no floor plane is visible, treat the world frame's z = 0 as
    the floor (true for an ``odom`` frame of a ground robot); off by default so that heights are
    never reported from an assumption the caller did not make.

    ``workers``: threads that extract and summarise the objects of one question while the calling
    thread finds the window's planes. ``object_cache_size``: object summaries kept, keyed by the
    window and the object's masks, so later questions on a window reuse them (``cache_size`` is the
    windows whose planes are kept).
    """

    arm_length_m: float = 0.8
    points: PointParams = field(default_factory=PointParams)
    ground: GroundParams = field(default_factory=GroundParams)
    min_object_points: int = 20
    ground_points_per_frame: int = 3000
    ground_from_world_origin: bool = False
    cache_size: int = 8
    object_cache_size: int = 32
    workers: int = field(default_factory=lambda: min(4, os.cpu_count() or 1))
    seed: int = 0


class _Unanswerable(Exception):
    """The request is well formed but the geometry cannot determine the quantity (carries the why)."""


def _has_geometry(frame: Frame) -> bool:
    return frame.depth is not None and frame.K is not None


class SpatialEngine:
    """Routes a ``Request`` to a spatial task and answers it from geometry (``source="geometry"``)."""

    def __init__(self, params: SpatialParams | None = None) -> None:
        self.params = params or SpatialParams()
        if self.params.arm_length_m <= 0:
            raise ValueError(f"arm_length_m must be positive, got {self.params.arm_length_m}")
        if self.params.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.params.workers}")
        self._plane_cache: LRU[str, list[Plane]] = LRU(self.params.cache_size)
        self._object_cache: LRU[str, ObjectGeometry] = LRU(self.params.object_cache_size)
        self._lock = threading.Lock()  # the caches; answer() may run on several executor threads
        self._pool: ThreadPoolExecutor | None = None

    def clear_cache(self) -> None:
        """Forget cached planes and object summaries (a benchmark's "new window", or to free memory)."""
        with self._lock:
            self._plane_cache.clear()
            self._object_cache.clear()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.params.workers, thread_name_prefix="spatial")
            return self._pool

    def _cached_object(self, key: str) -> ObjectGeometry | None:
        with self._lock:
            return self._object_cache.get_touch(key)

    def _store_object(self, key: str, geom: ObjectGeometry | None) -> None:
        if geom is None:
            return
        with self._lock:
            self._object_cache.put(key, geom)

    # ------------------------------------------------------------------ planning
    def plan(self, request: Request) -> SpatialPlan | Unanswerable:
        """The request read once: task, slots, objects and reading, with the data checked to cover them;
        or why the geometry will not answer it (never raises for a question it cannot map).

        A structured ``request.task`` (``TASK KEY=VALUE ...``, see ``parse.py``) wins over the question
        text; a malformed one raises ``TaskSyntaxError`` (a ``RequestError``): the caller's error, not a
        question to hand to the model. The reason of an unmappable request starts with ``NOT_MEASURABLE``.
        """
        if request.task:
            parsed = parse_structured(request.task)
        else:
            found, why = parse_question(request.question, len(request.regions))
            if found is None:
                return Unanswerable(why)
            parsed = found
        try:
            objects = resolve_objects(parsed, request.question, len(request.regions))
        except ValueError as exc:
            return Unanswerable(f"{NOT_MEASURABLE}: {exc}")
        plan = SpatialPlan(parsed, objects, parsed.reading(objects))
        try:
            self._check_coverage(request, plan)
        except _Unanswerable as exc:
            return Unanswerable(str(exc), plan)
        except ValueError as exc:
            return Unanswerable(str(exc), plan, malformed=True)
        return plan

    # ------------------------------------------------------------------ answering
    def answer(self, request: Request) -> Answer:
        """Geometric answer; undeterminable quantities and unmappable questions come back with ``reason``.

        Raises ``ValueError`` only for malformed input (a structured task that does not parse, masks
        or depth at the wrong size, masks on frames outside the window); a question it cannot map
        gives ``task=None`` and a reason that starts with ``NOT_MEASURABLE``, never a number.
        """
        t0 = time.perf_counter()
        return self.solve(request, self.plan(request), t0)

    def solve(self, request: Request, planned: SpatialPlan | Unanswerable, t0: float | None = None) -> Answer:
        """The answer to ``request`` as ``plan`` read it (``answer`` = ``plan`` then ``solve``); an
        ``Unanswerable`` gives its reason as the answer, or ``RequestError`` when it is malformed input.
        ``t0``: when the request's timing started (``perf_counter``), now when not given."""
        t0 = time.perf_counter() if t0 is None else t0
        if isinstance(planned, Unanswerable):
            if planned.malformed:
                raise RequestError(planned.reason)
            if planned.plan is None:
                why = planned.reason
                answer = Answer(
                    text=f"I cannot answer this from geometry: {why}.", reason=why, source="geometry"
                )
                answer.timings["total"] = time.perf_counter() - t0
                return answer
            plan, reason = planned.plan, planned.reason  # read, but the data do not cover it
        else:
            plan, reason = planned, ""
        objects = plan.objects
        scene: Scene | None = None
        if not reason:
            try:
                scene = self._build_scene(request, plan.task, objects)
                answer = solve(plan.task, scene, plan.slots, self.params.arm_length_m)
            except (_Unanswerable, Undeterminable) as exc:
                reason = str(exc)
        if reason:
            answer = Answer(text=f"I cannot determine this from depth and poses: {reason}.", reason=reason)
        if scene is not None:  # measured, even when the quantity then could not be determined
            answer.boxes = object_boxes(scene, request, objects)
        answer.source = "geometry"
        answer.task = plan.task
        answer.reading = plan.reading
        if plan.parsed.claim is not None and not reason:
            answer.text = f"{answer.text} {claim_check(answer, plan.parsed.claim)}".strip()
        if plan.parsed.glossed:  # the words of another language read, said as the reading is
            answer.text = f"{answer.text} (I {plan.parsed.glossed}.)".strip()
        if request.options and answer.option_index is None:
            answer.option_index = _match_option(answer, request.options, objects)
        # Solvers speak region indices (<objectK>); callers get the regions' own object ids.
        answer.object_ids = [request.regions[k].object_id for k in answer.object_ids]
        answer.timings["total"] = time.perf_counter() - t0
        return answer

    # ------------------------------------------------------------------ internals
    def _posed(self, request: Request) -> bool:
        return request.frames[-1].world_T_camera is not None

    def _check_coverage(self, request: Request, plan: SpatialPlan) -> None:
        """Whether the frames carry what the plan's task needs (depth, K, poses, masks of its objects):
        ``_Unanswerable`` when not, ``RequestError`` for malformed input."""
        if not request.frames:
            raise RequestError("the request has no frames")
        task, objects = plan.task, plan.objects
        posed = self._posed(request)
        if task == "walked_distance":
            missing = [i for i, f in enumerate(request.frames) if f.world_T_camera is None]
            if missing:
                raise _Unanswerable(f"no camera pose (TF) for frames {missing}")
            return
        last = request.frames[-1]
        if not posed and not _has_geometry(last):
            raise _Unanswerable("the last frame has neither a camera pose (TF) nor depth with intrinsics")
        for k in objects:
            region = request.regions[k]
            usable = []
            for fi, mask in region.masks.items():
                if not 0 <= fi < len(request.frames):
                    raise RequestError(
                        f"region {k} has a mask on frame {fi}, outside 0..{len(request.frames) - 1}"
                    )
                frame = request.frames[fi]
                if np.asarray(mask).shape != frame.rgb.shape[:2]:
                    raise RequestError(
                        f"region {k} mask on frame {fi} has shape {np.asarray(mask).shape}, frame is "
                        f"{frame.rgb.shape[:2]}"
                    )
                if not _has_geometry(frame):
                    continue
                if np.asarray(frame.depth).shape != frame.rgb.shape[:2]:
                    raise RequestError(
                        f"frame {fi}: depth {np.asarray(frame.depth).shape} is not registered to the "
                        f"colour image {frame.rgb.shape[:2]}"
                    )
                if posed and frame.world_T_camera is None:
                    continue
                if not posed and fi != len(request.frames) - 1:
                    continue
                usable.append(fi)
            if not usable:
                if posed:
                    raise _Unanswerable(
                        f"<object{k}> is not masked on any frame with depth, intrinsics and a camera pose"
                    )
                raise _Unanswerable(
                    f"<object{k}> is not masked on the last frame, and without camera poses (TF) other "
                    "frames cannot be related to me"
                )

    def _frame_pose(self, frame: Frame, align: np.ndarray | None) -> np.ndarray:
        if align is not None:
            return align
        assert frame.world_T_camera is not None
        return validate_pose(frame.world_T_camera)

    def describe(self, request: Request) -> Scene:
        """Geometry of every region that has enough depth (others are left out), for QA generation."""
        if not request.frames:
            raise RequestError("the request has no frames")
        if not self._posed(request) and not _has_geometry(request.frames[-1]):
            raise RequestError("the last frame has neither a camera pose nor depth with intrinsics")
        return self._build_scene(request, "", list(range(len(request.regions))), strict=False)

    def _build_scene(self, request: Request, task: str, objects: list[int], strict: bool = True) -> Scene:
        frames = request.frames
        last = len(frames) - 1
        path = None
        if all(f.world_T_camera is not None for f in frames):
            path = np.array([validate_pose(f.world_T_camera)[:3, 3] for f in frames])  # type: ignore[arg-type]
        if task == "walked_distance":
            me = validate_pose(frames[-1].world_T_camera)  # type: ignore[arg-type]
            return Scene(me=me, objects={}, ground=None, camera_path=path)
        posed = self._posed(request)
        if posed:
            usable = [f for f in frames if _has_geometry(f) and f.world_T_camera is not None]
            window = "posed:" + self._cache_key(usable)
        else:
            window = "unposed:" + self._cache_key([frames[last]])
        views = {
            k: [
                (fi, mask)
                for fi, mask in sorted(request.regions[k].masks.items())
                if _has_geometry(frames[fi])
                and (frames[fi].world_T_camera is not None if posed else fi == last)
            ]
            for k in objects
        }
        keys = {k: _object_key(window, frames, views[k]) for k in objects}
        cached = {k: self._cached_object(keys[k]) for k in objects}
        todo = [k for k in objects if cached[k] is None]
        # Each object's points are extracted in the pool while this thread finds the window's planes;
        # an object's summary needs the planes (support removal), so it follows in the pool too.
        # Without poses the points stay in the camera frame until the floor gives the alignment.
        pool = self._executor()
        extracted = {k: pool.submit(self._object_points, frames, views[k], posed, keys[k]) for k in todo}
        align: np.ndarray | None = None
        if posed:
            planes, ground = self._planes_posed(usable, window)
            n_usable = len(usable)
        else:
            align, planes, ground = self._planes_unposed(frames[last], window)
            n_usable = 1
        n_scene_points = min(n_usable * self.params.ground_points_per_frame, self.params.ground.max_points)
        rotate = None if align is None else align[:3, :3]
        summaries = {
            k: pool.submit(self._object_summary, extracted[k].result(), rotate, planes, n_scene_points)
            for k in todo
        }
        geoms: dict[int, ObjectGeometry] = {}
        for k in objects:
            geom = cached[k]
            if k in summaries:
                geom = summaries[k].result()
                self._store_object(keys[k], geom)
            if geom is None:
                if not strict:
                    continue
                total = extracted[k].result()[0].shape[0]  # a cached summary is never None
                raise _Unanswerable(
                    f"<object{k}> has only {total} points with valid depth inside its masks "
                    f"(need {self.params.min_object_points})"
                )
            geoms[k] = geom
        if ground is None and self.params.ground_from_world_origin and posed:
            ground = Plane(normal=np.array([0.0, 0.0, 1.0]), offset=0.0, n_inliers=0)
        me = self._frame_pose(frames[last], align)
        undo = None if align is None else align[:3, :3].T
        return Scene(me=me, objects=geoms, ground=ground, camera_path=path, request_R_scene=undo)

    def _object_points(
        self, frames: list[Frame], views: list[tuple[int, np.ndarray]], posed: bool, key: str
    ) -> tuple[np.ndarray, np.ndarray, int, float]:
        """One object's points over its views (world frame, or the camera's without poses), their noise
        covariance, the number of views that gave points and the width of one pixel at the object's depth
        (metres; the median over those views).

        The subsample is seeded by the object's own key (its masks on this window), so an object's
        geometry does not depend on the other objects of the request, their order or the thread."""
        rng = np.random.default_rng([self.params.seed, int(key[:16], 16)])
        # The summary keeps FUSED_MAX_POINTS over all views: sampling more per view only to drop
        # them later cost most of the extraction at 16 frames (4000 × 16 sampled, 20000 kept).
        per_view = replace(
            self.params.points,
            max_points_per_frame=min(
                self.params.points.max_points_per_frame, -(-FUSED_MAX_POINTS // max(len(views), 1))
            ),
        )
        chunks, errors, moment, pixels = [], [], np.zeros((3, 3)), []
        for fi, mask in views:
            frame = frames[fi]
            K = validate_K(frame.K)  # type: ignore[arg-type]
            pts, err = object_points_in_frame(
                np.asarray(frame.depth, dtype=np.float32), K, np.asarray(mask, dtype=bool), per_view, rng
            )
            if pts.shape[0]:
                pose = validate_pose(frame.world_T_camera) if posed else np.eye(4)  # type: ignore[arg-type]
                chunks.append(transform(pose, pts))
                errors.append(err)
                moment += ray_moment(pts, pose[:3, :3])
                pixels.append(float(np.median(pts[:, 2])) / float(np.sqrt(K[0, 0] * K[1, 1])))
        if not chunks:
            return np.zeros((0, 3)), np.zeros((3, 3)), 0, 0.0
        total = sum(c.shape[0] for c in chunks)
        sigma = float(np.median(np.concatenate(errors)))
        return np.concatenate(chunks), sigma**2 * moment / total, len(chunks), float(np.median(pixels))

    def _object_summary(
        self,
        extracted: tuple[np.ndarray, np.ndarray, int, float],
        rotate: np.ndarray | None,
        planes: list[Plane],
        n_scene_points: int,
    ) -> ObjectGeometry | None:
        """The object's summary resting on its support (``rotate``: camera → gravity-aligned frame without
        poses), or None with too few points."""
        pts, noise_cov, n_views, pixel_m = extracted
        if pts.shape[0] < self.params.min_object_points:
            return None
        sigma = self.face_sigma(noise_cov, pixel_m)
        if rotate is not None:
            pts, noise_cov = pts @ rotate.T, rotate @ noise_cov @ rotate.T
        g = self.params.ground
        pts, supports = remove_support_points(pts, planes, g.inlier_threshold_m, n_scene_points)
        geom = replace(summarise(pts, n_views, noise_cov=noise_cov), sigma_m=sigma)
        return rest_on_support(geom, supports, reach=2.5 * g.inlier_threshold_m)

    def face_sigma(self, noise_cov: np.ndarray, pixel_m: float) -> float:
        """Standard uncertainty (metres) of one face of an object's box, from the data.

        Depth: a face is placed by the points at the object's extreme, where one pixel's noise, not the
        average of a window, moves it. The local depth fit's standard error (√trace(noise_cov), along the
        rays; ``ray_moment``) is that noise averaged over a full (2r+1)² window of pixels, so one pixel's
        depth scatter is (2r+1) times it. Image: a silhouette face lies within the edge band the points
        exclude (``edge_band_px``) and within its pixel, each uniform: (band² + 1) / 12 pixels² at the
        object's depth. The two add in quadrature."""
        p = self.params.points
        pixel_noise = (2 * p.window_radius + 1) * float(np.sqrt(np.trace(noise_cov)))
        return float(np.sqrt(pixel_noise**2 + (p.edge_band_px**2 + 1) / 12.0 * pixel_m**2))

    def _ground_points(self, frame: Frame, pose: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        depth = np.asarray(frame.depth, dtype=np.float32)
        K = validate_K(frame.K)  # type: ignore[arg-type]
        ok = valid_depth(depth, self.params.points.min_depth, self.params.points.max_depth)
        flat = np.flatnonzero(ok)  # pixel indices in row-major order, as np.nonzero gives them
        if flat.size > self.params.ground_points_per_frame:
            flat = flat[rng.choice(flat.size, self.params.ground_points_per_frame, replace=False)]
        rows, cols = np.divmod(flat, depth.shape[1])
        return transform(pose, backproject(depth, K, rows, cols))

    def _cache_key(self, frames: list[Frame]) -> str:
        h = hashlib.blake2b(digest_size=16)
        for f in frames:
            h.update(str((f.stamp_ns, f.frame_id)).encode())
            if f.depth is not None:
                h.update(np.ascontiguousarray(np.asarray(f.depth)[::7, ::7]).tobytes())
            if f.world_T_camera is not None:
                h.update(np.asarray(f.world_T_camera, dtype=np.float64).tobytes())
        return h.hexdigest()

    def _cached_planes(self, key: str, compute) -> list[Plane]:
        with self._lock:
            cached = self._plane_cache.get_touch(key)
            if cached is not None:
                return cached
        planes = compute()
        with self._lock:
            self._plane_cache.put(key, planes)
        return planes

    def _planes_posed(self, usable: list[Frame], key: str) -> tuple[list[Plane], Plane | None]:
        """The large planes (world frame) of the window's ``usable`` frames (depth, K and pose) and, among
        them, the floor (gravity = +z); cached under the window's ``key``."""
        if not usable:
            return [], None

        def compute() -> list[Plane]:
            rng = np.random.default_rng(self.params.seed)
            pts = np.concatenate(
                [self._ground_points(f, validate_pose(f.world_T_camera), rng) for f in usable]  # type: ignore[arg-type]
            )
            return detect_planes(pts, self.params.ground)

        planes = self._cached_planes(key, compute)
        n = min(len(usable) * self.params.ground_points_per_frame, self.params.ground.max_points)
        g = self.params.ground
        return planes, choose_ground(planes, np.array([0.0, 0.0, 1.0]), n, g, g.max_tilt_deg)

    def _planes_unposed(self, frame: Frame, key: str) -> tuple[np.ndarray, list[Plane], Plane | None]:
        """Gravity alignment of the last frame from its floor plane (camera-up prior −y), and its planes
        (cached under the window's ``key``)."""

        def compute() -> list[Plane]:
            rng = np.random.default_rng(self.params.seed)
            return detect_planes(self._ground_points(frame, np.eye(4), rng), self.params.ground)

        planes_cam = self._cached_planes(key, compute)
        g = self.params.ground
        floor = choose_ground(
            planes_cam,
            np.array([0.0, -1.0, 0.0]),
            self.params.ground_points_per_frame,
            g,
            g.prior_max_tilt_deg,
        )
        up_cam = floor.normal if floor is not None else np.array([0.0, -1.0, 0.0])
        align = np.eye(4)
        align[:3, :3] = rotation_aligning(up_cam, np.array([0.0, 0.0, 1.0]))
        planes = [p.rotated(align[:3, :3]) for p in planes_cam]
        ground = None if floor is None else floor.rotated(align[:3, :3])
        return align, planes, ground


def object_boxes(scene: Scene, request: Request, objects: list[int]) -> list[ObjectBox]:
    """The measured box of each of ``objects`` (region indices) in the request's frame, under the
    regions' own ids: the scene's gravity alignment undone (``Scene.request_R_scene``).

    A summary's ``yaw`` is the heading of its first box axis, which is the long side or the short one;
    the box's is the long side's (its length), kept in [-π/2, π/2) since a box turned by π is itself.
    """
    from scipy.spatial.transform import Rotation

    undo = scene.request_R_scene
    frame_id = "" if undo is None else request.frames[-1].frame_id
    boxes = []
    for k in objects:
        geom = scene.objects.get(k)
        if not isinstance(geom, ObjectGeometry):
            continue
        c = geom.corners_xy
        along_first = float(np.linalg.norm(c[1] - c[0])) >= float(np.linalg.norm(c[3] - c[0]))
        yaw = float(np.mod(geom.yaw + (0.0 if along_first else np.pi / 2) + np.pi / 2, np.pi) - np.pi / 2)
        cos, sin = np.cos(yaw), np.sin(yaw)
        R = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
        center = np.asarray(geom.center, dtype=np.float64)
        if undo is not None:
            R, center = undo @ R, undo @ center
        qx, qy, qz, qw = Rotation.from_matrix(R).as_quat(canonical=True)  # canonical: w >= 0
        region = request.regions[k]
        boxes.append(ObjectBox(
            object_id=int(region.object_id),
            label=region.label,
            center=(float(center[0]), float(center[1]), float(center[2])),
            size=(float(geom.length), float(geom.width), float(geom.height)),
            yaw=yaw,
            frame_id=frame_id,
            orientation=(float(qx), float(qy), float(qz), float(qw)),
        ))
    return boxes


def _object_key(window: str, frames: list[Frame], views: list[tuple[int, np.ndarray]]) -> str:
    """Identity of one object's geometry: the window (its depth and poses) and the object's masks."""
    h = hashlib.blake2b(window.encode(), digest_size=16)
    for fi, mask in views:
        m = np.asarray(mask, dtype=bool)
        h.update(str((fi, frames[fi].stamp_ns, m.shape)).encode())
        h.update(np.packbits(m).tobytes())
    return h.hexdigest()


def _match_option(answer: Answer, options: list[str], objects: list[int]) -> int | None:
    """Index of the request option that the geometric answer picks, when it picks one."""
    lowered = [o.strip().lower() for o in options]
    text = answer.text.strip().lower()
    for word in ("yes", "no", "left", "right"):
        if text.startswith(word) and word in lowered:
            return lowered.index(word)
    if answer.object_ids:
        k = answer.object_ids[0]
        for i, o in enumerate(lowered):
            if f"<object{k}>" in o.replace(" ", ""):
                return i
        if len(options) == len(objects) and k in objects:
            return objects.index(k)
    return None

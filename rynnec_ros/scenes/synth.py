"""``gen-scene``: render a synthetic scene into a rosbag2 bag plus ground-truth spatial QA.

Output directory layout::

    DIR/bag/             rosbag2 (MCAP by default, as Jazzy/Kilted record; or sqlite3): colour,
                         registered depth, camera_info, /tf, /tf_static
    DIR/questions.json   spatial QA labelled from the scene model by ``spatial.truth`` (dataset.QA_FORMAT)
    DIR/masks.json       every object's instance masks on every frame (dataset.MASKS_FORMAT)
    DIR/scene.json       the scene model: room, objects (centre, size), camera poses
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import binary_dilation

from rynnec_ros.core import masks as rle_codec
from rynnec_ros.scenes.bagio import OPTICAL_FRAME, BagFrame, check_storage, write_bag
from rynnec_ros.scenes.dataset import MASKS_FORMAT, QA_FORMAT, save_json
from rynnec_ros.scenes.qa import GenParams, GenStats, Visibility, generate
from rynnec_ros.scenes.scene import (
    LINK_R_OPTICAL,
    Scene,
    degrade_depth,
    make_scene,
    make_T,
    render,
    yaw_matrix,
)
from rynnec_ros.scenes.truth import ground_truth
from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.plan import Parsed
from rynnec_ros.spatial.solvers import Scene as Facts

T0_NS = 1_700_000_000 * 1_000_000_000
FRAME_PERIOD_NS = 500_000_000  # 2 Hz, the order of RynnEC's 1 fps sampling


@dataclass
class SceneOptions:
    seed: int = 0
    frames: int = 16
    width: int = 320
    height: int = 240
    depth_noise: float = 0.0
    holes: float = 0.0
    mask_bleed_px: int = 0  # dilate the published masks, as a segmenter's masks spill onto the background
    per_task: int = 5
    arm_length_m: float = 0.8
    storage: str = "mcap"  # rosbag2 storage of DIR/bag: "mcap" or "sqlite3" (bagio.write_bag)
    chunk_compression: str = "none"  # MCAP chunks: "none" (ros2 bag record's default) or "zstd"


def scene_oracle(scene: Scene):
    """Ground-truth facts of a window from the scene model (exact poses and primitives)."""

    def oracle(window: list[int], object_ids: list[int]) -> Facts:
        poses = [scene.world_T_camera(i) for i in window]
        return Facts(
            me=poses[-1],
            objects={k: scene.object(oid) for k, oid in enumerate(object_ids)},
            ground=Plane(normal=np.array([0.0, 0.0, 1.0]), offset=0.0, n_inliers=0),
            camera_path=np.array([p[:3, 3] for p in poses]),
        )

    return oracle


def scene_truth(scene: Scene, arm_length_m: float):
    """Labels of a window's questions from the scene model (``spatial.truth``, not the solvers)."""

    def truth(window: list[int], object_ids: list[int], parsed: Parsed) -> dict[str, Any] | None:
        objs = [scene.object(oid) for oid in object_ids]
        return ground_truth(parsed, scene, objs, window[-1], first=window[0], arm_length_m=arm_length_m)

    return truth


_SIZE_DIMS = {
    "object_height": ("height",),
    "object_width": ("width",),
    "object_length": ("length",),
    "tallest_choice": ("height",),
    # a centre height is only knowable when the object's vertical extent is seen
    "height_from_ground": ("height",),
    "height_difference": ("height",),
    "higher_choice": ("height",),
}


def observability(scene: Scene, observed: dict[int, dict[int, np.ndarray]], min_coverage: float = 0.9):
    """Veto size and height questions whose deciding dimension the window's views do not span.

    ``observed[object_id][frame]`` holds world points of the object's visible surface (from the clean
    render). A dimension counts as observed when those points cover ``min_coverage`` of it in the
    object's own frame; a width of a cabinet whose back stands against the wall is not observable
    from any viewpoint and is not asked.
    """

    def check(task: str, window: list[int], object_ids: list[int]) -> bool:
        dims = _SIZE_DIMS.get(task)
        if dims is None:
            return True
        for oid in object_ids:
            chunks = [observed[oid][f] for f in window if f in observed.get(oid, {})]
            if not chunks:
                return False
            obj = scene.object(oid)
            local = np.concatenate(chunks) @ yaw_matrix(obj.yaw)
            span = local.max(axis=0) - local.min(axis=0)
            lo, hi = obj.local_bounds()
            size = hi - lo
            long_axis = 0 if size[0] >= size[1] else 1
            cover = {
                "height": span[2] / size[2],
                "length": span[long_axis] / size[long_axis],
                "width": span[1 - long_axis] / size[1 - long_axis],
            }
            if any(cover[d] < min_coverage for d in dims):
                return False
        return True

    return check


def _visible_points(r, T: np.ndarray, K: np.ndarray, oid: int, rng: np.random.Generator) -> np.ndarray | None:
    rows, cols = np.nonzero(r.ids == oid)
    if rows.size == 0:
        return None
    if rows.size > 800:
        pick = rng.choice(rows.size, 800, replace=False)
        rows, cols = rows[pick], cols[pick]
    z = r.depth[rows, cols].astype(np.float64)
    pts = np.stack([(cols - K[0, 2]) * z / K[0, 0], (rows - K[1, 2]) * z / K[1, 1], z], axis=1)
    return pts @ T[:3, :3].T + T[:3, 3]


def _scene_json(scene: Scene, stamps: list[int]) -> dict[str, Any]:
    return {
        "world_frame": "odom",
        "room": {"x_half": scene.room.x_half, "y_half": scene.room.y_half, "ceiling": scene.room.ceiling},
        "K": scene.camera.K.tolist(),
        "objects": [
            {
                "object_id": o.object_id,
                "label": o.label,
                "center": [round(float(v), 4) for v in o.center],
                "height": round(o.height, 4),
                "length": round(o.length, 4),
                "width": round(o.width, 4),
                "yaw": round(o.yaw, 4),
            }
            for o in scene.objects
        ],
        "camera": [
            {"stamp_ns": s, "world_T_camera": np.round(scene.world_T_camera(i), 6).tolist()}
            for i, s in enumerate(stamps)
        ],
    }


def generate_scene(out_dir: Path | str, opts: SceneOptions) -> dict[str, Any]:
    """Render, write the bag and the JSON files; returns a short summary."""
    if opts.frames < 2:
        raise ValueError("a scene needs at least 2 frames")
    if opts.mask_bleed_px < 0:
        raise ValueError(f"mask_bleed_px must be >= 0, got {opts.mask_bleed_px}")
    if not (0.0 <= opts.depth_noise < 0.5 and 0.0 <= opts.holes < 0.9):
        raise ValueError(
            f"depth_noise must be in [0, 0.5) and holes in [0, 0.9), got {opts.depth_noise}, {opts.holes}"
        )
    check_storage(opts.storage, opts.chunk_compression)  # before rendering, not after
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    scene = make_scene(opts.seed, opts.frames, opts.width, opts.height)
    rng = np.random.default_rng(opts.seed + 1000)
    stamps = [T0_NS + i * FRAME_PERIOD_NS for i in range(opts.frames)]
    bag_frames: list[BagFrame] = []
    visibility = [Visibility(o.object_id, o.label, {}) for o in scene.objects]
    observed: dict[int, dict[int, np.ndarray]] = {o.object_id: {} for o in scene.objects}
    for i, stamp in enumerate(stamps):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        depth = degrade_depth(r.depth, opts.depth_noise, opts.holes, rng)
        for vis in visibility:
            m = r.ids == vis.object_id
            if opts.mask_bleed_px > 0 and m.any():
                m = binary_dilation(m, iterations=opts.mask_bleed_px)
            if m.any():
                vis.masks[i] = m
                pts = _visible_points(r, T, scene.camera.K, vis.object_id, rng)
                if pts is not None:
                    observed[vis.object_id][i] = pts
        bag_frames.append(
            BagFrame(
                stamp,
                r.rgb,
                depth,
                [
                    ("odom", "base_link", scene.base_poses[i]),
                    ("base_link", "camera_link", scene.head_poses[i]),
                ],
            )
        )
    static = [("camera_link", OPTICAL_FRAME, make_T(LINK_R_OPTICAL, np.zeros(3)))]
    write_bag(out / "bag", bag_frames, scene.camera.K, static, opts.storage, opts.chunk_compression)
    params = GenParams(
        per_task=opts.per_task,
        arm_length_m=opts.arm_length_m,
        min_mask_pixels=max(20, opts.width * opts.height // 1500),
    )
    stats = GenStats()
    questions = generate(
        opts.frames,
        stamps,
        visibility,
        scene_oracle(scene),
        params,
        np.random.default_rng(opts.seed),
        id_prefix=f"s{opts.seed}-q",
        observable=observability(scene, observed),
        truth=scene_truth(scene, opts.arm_length_m),
        stats=stats,
    )
    save_json(
        out / "questions.json",
        {
            "format": QA_FORMAT,
            "bag": "bag",
            "arm_length_m": opts.arm_length_m,
            "source": "scene_model",
            "depth_noise": opts.depth_noise,
            "holes": opts.holes,
            "mask_bleed_px": opts.mask_bleed_px,
            "questions": questions,
        },
    )
    save_json(
        out / "masks.json",
        {
            "format": MASKS_FORMAT,
            "objects": [
                {
                    "object_id": v.object_id,
                    "label": v.label,
                    "masks": {str(stamps[i]): rle_codec.encode(m) for i, m in sorted(v.masks.items())},
                }
                for v in visibility
            ],
        },
    )
    save_json(out / "scene.json", _scene_json(scene, stamps))
    return {
        "out": str(out),
        "frames": opts.frames,
        "storage": opts.storage,
        "objects": len(scene.objects),
        "questions": len(questions),
        "label_disagreements": stats.disagreements,
    }

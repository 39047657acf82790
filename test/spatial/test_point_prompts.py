"""3D point prompts against the scene model (``rynnec_ros.scenes``, what ``gen-scene`` renders).

Points are taken on objects' surfaces from the renderer's own ray hits (a pixel of an object's instance
mask, its ray scaled by the ray-cast depth). Whether such a point is visible on another frame is decided
here from the scene's primitives, not from depth images: it is out of view when its pinhole projection
leaves the image, occluded when the segment from that camera's centre to the point hits any primitive
(its own object's included) before the point. The code under test sees only what a robot has: the
rendered (optionally noisy, holed) depth, K and the pose.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import binary_erosion

from rynnec_ros.core.types import Frame
from rynnec_ros.scenes.scene import Scene, degrade_depth, make_scene, render
from rynnec_ros.spatial.prompts import pixel_point, point_prompts, point_views

N_FRAMES = 12


def _scene(seed: int, noise: float, holes: float) -> tuple[Scene, list, list[Frame]]:
    scene = make_scene(seed, N_FRAMES, 160, 120)
    rng = np.random.default_rng(seed)
    renders, frames = [], []
    for i in range(N_FRAMES):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        renders.append(r)
        frames.append(Frame(rgb=r.rgb, stamp_ns=i, depth=degrade_depth(r.depth, noise, holes, rng),
                            K=scene.camera.K, world_T_camera=T))
    return scene, renders, frames


SurfacePoint = tuple[int, int, tuple[int, int], np.ndarray]


def _surface_points(scene: Scene, renders: list, rng: np.random.Generator) -> list[SurfacePoint]:
    """(object id, source frame, (col, row), world point) for three interior pixels per object and frame."""
    K = scene.camera.K
    out = []
    for i, r in enumerate(renders):
        T = scene.world_T_camera(i)
        for obj in scene.objects:
            interior = binary_erosion(r.ids == obj.object_id, iterations=2)
            rows, cols = np.nonzero(interior)
            if rows.size < 60:
                continue
            for k in rng.choice(rows.size, 3, replace=False):
                row, col = int(rows[k]), int(cols[k])
                ray = T[:3, :3] @ np.array([(col - K[0, 2]) / K[0, 0], (row - K[1, 2]) / K[1, 1], 1.0])
                out.append((obj.object_id, i, (col, row), T[:3, 3] + float(r.depth[row, col]) * ray))
    return out


def _truth(scene: Scene, i: int, p: np.ndarray, oid: int) -> str:
    """From the scene model: "out of view"; "occluded" when another object's primitive is hit on the
    segment from the camera's centre to the point; "behind itself" when only its own object is (the
    point is on a face turned away: the pixel still shows that object); "visible" otherwise."""
    T = scene.world_T_camera(i)
    K, cam = scene.camera.K, scene.camera
    x, y, z = (p - T[:3, 3]) @ T[:3, :3]
    if z <= 0:
        return "out of view"
    col, row = np.floor(K[0, 0] * x / z + K[0, 2] + 0.5), np.floor(K[1, 1] * y / z + K[1, 2] + 0.5)
    if not (0 <= col < cam.width and 0 <= row < cam.height):
        return "out of view"
    o = T[:3, 3]
    d = (p - o)[None]  # the point at t = 1
    hits = {obj.object_id for obj in scene.objects for part in obj.parts
            if part.intersect(o, d)[0][0] < 1 - 1e-3}
    if hits - {oid}:
        return "occluded"
    return "behind itself" if hits else "visible"


@pytest.mark.parametrize(("seed", "noise", "holes"), [(0, 0.0, 0.0), (1, 0.0, 0.0), (2, 0.01, 0.1)])
def test_a_3d_point_prompts_only_frames_that_see_it_and_inside_its_object(seed, noise, holes) -> None:
    scene, renders, frames = _scene(seed, noise, holes)
    rng = np.random.default_rng(100 + seed)
    points = _surface_points(scene, renders, rng)
    assert len(points) > 60
    counts = {"visible": 0, "missed": 0, "occluded": 0, "out of view": 0}
    for oid, _, _, p in points:
        views = point_views(p, frames)
        prompted = {pr.frame: pr for pr in point_prompts(p, frames, "the point")} if any(
            v.pixel is not None for v in views) else {}
        for i in range(N_FRAMES):
            truth = _truth(scene, i, p, oid)
            if i in prompted:
                x, y = prompted[i].points[0]
                col, row = int(np.floor(x + 0.5)), int(np.floor(y + 0.5))
                assert renders[i].ids[row, col] == oid, (oid, i, truth)  # inside the object's true mask
                assert truth != "out of view" and prompted[i].labels == (1,)
            if truth in ("occluded", "out of view"):
                counts[truth] += 1
                # occluded by another object on the pixel itself: never prompted there
                assert i not in prompted or renders[i].ids[row, col] == oid
            elif truth == "visible":
                counts["visible"] += 1
                counts["missed"] += i not in prompted
    assert counts["occluded"] > 0 and counts["out of view"] > 0 and counts["visible"] > 0, counts
    # Recall: a truly visible point is prompted unless noise/holes hide its depth, or it sits within a
    # pixel of a silhouette, where the 3x3 depth median straddles two surfaces.
    assert counts["missed"] <= (0.05 if noise == 0 else 0.15) * counts["visible"], counts


def test_a_pixel_click_becomes_the_same_object_on_every_frame_that_sees_it() -> None:
    scene, renders, frames = _scene(3, 0.0, 0.0)
    points = _surface_points(scene, renders, np.random.default_rng(7))
    for oid, i, (col, row), p in points[::5]:
        lifted = pixel_point(frames[i], (col, row))
        np.testing.assert_allclose(lifted, p, atol=1e-4)  # the pixel's own depth (float32)
        prompted = {pr.frame: pr for pr in point_prompts(lifted, frames, "the click")}
        assert i in prompted  # its own frame, at the click
        np.testing.assert_allclose(prompted[i].points[0], (col, row), atol=0.5)
        for j, pr in prompted.items():
            x, y = pr.points[0]
            assert renders[j].ids[int(np.floor(y + 0.5)), int(np.floor(x + 0.5))] == oid, (oid, i, j)


def test_refusals_name_what_the_frames_could_not_show() -> None:
    scene, _, frames = _scene(0, 0.0, 0.0)
    behind = scene.world_T_camera(0)[:3, 3] - 5 * scene.world_T_camera(0)[:3, 2]
    views = point_views(behind, frames[:1])
    assert views[0].why == "behind the camera"
    with pytest.raises(ValueError, match=r"point is visible on none of the 1 frames \(1 behind the camera\)"):
        point_prompts(behind, frames[:1], "the point")
    bare = [Frame(rgb=f.rgb, K=f.K, world_T_camera=f.world_T_camera) for f in frames[:2]]
    centre = scene.objects[0].center
    assert {v.why for v in point_views(centre, bare)} <= {"no depth", "outside the image",
                                                          "behind the camera"}
    with pytest.raises(ValueError, match="not finite"):
        point_views([0.0, np.nan, 1.0], frames)
    with pytest.raises(ValueError, match="depth, camera_info and a TF pose"):
        pixel_point(bare[0], (3, 3))

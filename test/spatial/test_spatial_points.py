"""Per-object point extraction and robust extents against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import binary_dilation

from rynnec_ros.spatial.points import (
    PointParams,
    backproject,
    dense_range,
    drop_isolated,
    eroded_disk,
    keep_main_clusters,
    mad_gate,
    masked_plane_at,
    object_points_in_frame,
    ray_moment,
    reject_edge_bleed,
    summarise,
    validate_K,
    validate_pose,
)

K = np.array([[100.0, 0, 50.0], [0, 100.0, 40.0], [0, 0, 1]])


def test_backproject_hand_values() -> None:
    depth = np.full((80, 100), 2.0, np.float32)
    pts = backproject(depth, K, np.array([40, 40, 60]), np.array([50, 99, 70]))
    # principal point -> on the optical axis; (u=99, v=40) -> x = (99-50)*2/100 = 0.98
    np.testing.assert_allclose(pts[0], [0.0, 0.0, 2.0])
    np.testing.assert_allclose(pts[1], [0.98, 0.0, 2.0])
    np.testing.assert_allclose(pts[2], [0.4, 0.4, 2.0])


def test_mad_gate_rejects_far_outliers() -> None:
    values = np.array([1.0, 1.01, 0.99, 1.02, 0.98, 3.5, 4.0])
    keep = mad_gate(values, k=3.0, floor=0.01)
    assert keep.tolist() == [True, True, True, True, True, False, False]


def test_masked_plane_ignores_background_and_noise() -> None:
    depth = np.full((20, 20), 5.0, np.float32)  # background at 5 m
    mask = np.zeros((20, 20), bool)
    mask[5:15, 5:15] = True
    depth[mask] = 2.0
    depth[10, 12] = 2.3  # a noisy pixel
    depth[10, 10] = np.nan  # a hole
    usable = mask & np.isfinite(depth)
    rows, cols = np.array([5, 10, 10, 0]), np.array([5, 12, 11, 0])
    out, _ = masked_plane_at(depth, usable, rows, cols, radius=2)
    assert out[0] == pytest.approx(2.0)  # corner pixel not pulled toward the 5 m background
    assert out[1] == pytest.approx(2.0)  # the noisy pixel itself is refitted without it
    assert out[2] == pytest.approx(2.0)  # the hole next to it is ignored
    assert np.isnan(out[3])  # no object pixel in its window
    np.testing.assert_allclose(masked_plane_at(depth, usable, rows[:3], cols[:3], 0)[0], [2.0, 2.3, 2.0])


def test_masked_plane_is_unbiased_where_the_mask_edge_cuts_the_window() -> None:
    """A slanted surface z = 2 + 0.05·col (metres; by hand: the value at the pixel is the plane's), cut
    by the mask's right edge at col 12: the edge pixel keeps its own depth 2.60 m, where the median of
    its cut window (cols 10-12, all rows) would be that of col 11, 2.55 m, 5 cm toward the camera."""
    cols_grid = np.tile(np.arange(20, dtype=np.float32), (20, 1))
    depth = 2.0 + 0.05 * cols_grid
    mask = np.zeros((20, 20), bool)
    mask[4:16, 3:13] = True
    out, err = masked_plane_at(depth, mask, np.array([10, 10, 4]), np.array([12, 7, 12]), radius=2)
    np.testing.assert_allclose(out, [2.60, 2.35, 2.60], atol=1e-5)
    np.testing.assert_allclose(err, 0.0, atol=1e-5)  # an exact plane: no noise to report
    # a one-pixel-wide strip cannot fix a plane: it takes the median of its samples
    strip = np.zeros((20, 20), bool)
    strip[10, 3:13] = True
    thin, _ = masked_plane_at(depth, strip, np.array([10]), np.array([12]), radius=2)
    assert thin[0] == pytest.approx(2.55)


def test_masked_plane_standard_error_follows_least_squares() -> None:
    """Standard error of the fitted depth: 0 on exact depth; on i.i.d. noise σ, σ/5 inside the mask
    (a centred 5×5 window: var = σ²/25) and σ·√(1/15 + 0.1) = 0.408σ at a pixel whose window the mask's
    edge cuts to 3 columns (by hand: offsets dc ∈ {-2,-1,0} × dr ∈ {-2..2}, n = 15, mean dc = -1,
    S_cc = 5·2 = 10, S_rr = 3·10 = 30, S_rc = 0, so mᵀS⁻¹m = 1/10). The residuals' robust sigma reads
    σ a few percent low (3 of 25 degrees of freedom go to the plane, and a median of 25), hence the
    tolerance."""
    rng = np.random.default_rng(3)
    sigma = 0.01
    depth = (2.0 + sigma * rng.standard_normal((200, 200))).astype(np.float32)
    mask = np.zeros((200, 200), bool)
    mask[:, :100] = True
    rows = np.arange(10, 190)
    inner = np.full(rows.size, 50)
    edge = np.full(rows.size, 99)
    z_in, err_in = masked_plane_at(depth, mask, rows, inner, radius=2)
    _, err_edge = masked_plane_at(depth, mask, rows, edge, radius=2)
    assert float(np.mean(err_in)) == pytest.approx(sigma / 5, rel=0.15)
    assert float(np.std(z_in - 2.0)) == pytest.approx(sigma / 5, rel=0.2)  # what the error claims
    assert float(np.mean(err_edge)) == pytest.approx(sigma * np.sqrt(1 / 15 + 0.1), rel=0.15)
    _, exact = masked_plane_at(np.full((200, 200), 2.0, np.float32), mask, rows, edge, radius=2)
    assert np.all(exact == 0.0)


def test_object_points_drop_mask_bleed_onto_background() -> None:
    depth = np.full((80, 100), 6.0, np.float32)
    obj = np.zeros((80, 100), bool)
    obj[30:50, 40:60] = True
    depth[obj] = 2.0
    bleed = obj.copy()
    bleed[28:52, 38:62] = True  # a 2-pixel ring of mask on the wall behind
    pts, _ = object_points_in_frame(depth, K, bleed, PointParams(window_radius=0), np.random.default_rng(0))
    assert np.all(np.abs(pts[:, 2] - 2.0) < 1e-6)
    assert len(pts) == obj.sum()


def test_object_points_empty_when_no_depth() -> None:
    depth = np.full((80, 100), np.nan, np.float32)
    mask = np.ones((80, 100), bool)
    assert object_points_in_frame(depth, K, mask, PointParams(), np.random.default_rng(0))[0].shape == (0, 3)


def test_dense_range_keeps_edges_and_drops_isolated_points() -> None:
    values = np.concatenate([np.linspace(0.0, 1.0, 1000), [1.8, -0.9]])
    lo, hi = dense_range(values)
    assert lo == pytest.approx(0.0, abs=1e-9)
    assert hi == pytest.approx(1.0, abs=1e-9)


def _box_surface(size: np.ndarray, yaw: float, center: np.ndarray, n: int = 4000) -> np.ndarray:
    rng = np.random.default_rng(0)
    pts = rng.uniform(-0.5, 0.5, (n, 3)) * size
    axis = rng.integers(0, 3, n)
    pts[np.arange(n), axis] = np.sign(pts[np.arange(n), axis]) * size[axis] / 2  # on the faces
    c, s = np.cos(yaw), np.sin(yaw)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    return pts @ R.T + center


def test_summarise_oriented_box() -> None:
    size = np.array([1.2, 0.5, 0.8])
    center = np.array([2.0, -1.0, 0.4])
    g = summarise(_box_surface(size, np.deg2rad(30), center), n_frames=1)
    assert g.length == pytest.approx(1.2, abs=0.02)
    assert g.width == pytest.approx(0.5, abs=0.02)
    assert g.height == pytest.approx(0.8, abs=0.02)
    np.testing.assert_allclose(g.center, center, atol=0.02)
    assert g.nearest_distance(np.array([2.0, -1.0, 3.0])) == pytest.approx(2.2, abs=0.03)


def test_ray_moment_sums_world_ray_outer_products() -> None:
    """Two points on the optical axis and one at 45° to its right (camera frame x right, z forward); with
    the optical frame's usual pose (camera z → world x, camera x → world -y) the rays are world +x twice
    and (+x, -y)/√2 once: Σ ddᵀ = [[2.5, -0.5, 0], [-0.5, 0.5, 0], [0, 0, 0]] (by hand)."""
    pts = np.array([[0.0, 0.0, 2.0], [0.0, 0.0, 5.0], [1.0, 0.0, 1.0]])
    R = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
    expected = np.array([[2.5, -0.5, 0.0], [-0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(ray_moment(pts, R), expected, atol=1e-12)


def test_summarise_takes_the_points_noise_off_the_extents() -> None:
    """A 0.60 × 0.40 × 0.50 m box (by construction) seen from 2 m down -y: its front face (y = 0) and top,
    with each point displaced along its ray from the camera by Gaussian noise of 8 mm, as fused depth
    leaves it. The noise's tails widen the depth-wise side (the rays cross the front face); told the
    noise covariance (0.008² · mean ray outer product, from ``ray_moment``), both sides
    come back within 1.5 cm of the box's, the side the rays run across is not shrunk for noise that
    does not move it, and on exact points nothing changes."""
    rng = np.random.default_rng(5)
    a, b, h = 0.60, 0.40, 0.50
    n = 8000
    front = np.stack([rng.uniform(0, a, n), np.zeros(n), rng.uniform(0, h, n)], axis=1)
    top = np.stack([rng.uniform(0, a, n // 2), rng.uniform(0, b, n // 2), np.full(n // 2, h)], axis=1)
    exact = np.concatenate([front, top])
    camera = np.array([a / 2, -2.0, 1.2])
    rays = (exact - camera) / np.linalg.norm(exact - camera, axis=1, keepdims=True)
    noisy = exact + rays * rng.normal(0.0, 0.008, (exact.shape[0], 1))
    plain = summarise(noisy, n_frames=8)
    cov = 0.008**2 * rays.T @ rays / rays.shape[0]
    told = summarise(noisy, n_frames=8, noise_cov=cov)
    assert plain.width - b > 0.03  # the tails' widening, without the correction
    assert told.length == pytest.approx(a, abs=0.015)
    assert told.width == pytest.approx(b, abs=0.015)
    clean, clean_told = summarise(exact, n_frames=8), summarise(exact, n_frames=8, noise_cov=np.zeros((3, 3)))
    assert (clean.length, clean.width) == (clean_told.length, clean_told.width)


@pytest.mark.parametrize("yaw_deg", [0.0, 17.0, 44.0, 73.0])
def test_summarise_two_faces_seen_is_the_box_not_its_hypotenuse(yaw_deg: float) -> None:
    """A 0.90 × 0.46 × 1.30 m box against a wall shows two vertical faces, its front and (at a grazing
    angle, so sparser) one side: the box is 0.90 × 0.46 m (by construction). The hull of those points is
    a right triangle, and the box along the hypotenuse has about the same area, √(0.90² + 0.46²) = 1.011
    × 0.90·0.46/1.011 = 0.410 m: the minimum-area choice returned 1.007 × 0.420 m here at every yaw; the
    sides the points lie on decide."""
    rng = np.random.default_rng(1)
    a, b, h = 0.90, 0.46, 1.30
    front = np.stack([rng.uniform(0, a, 3000), np.zeros(3000), rng.uniform(0, h, 3000)], axis=1)
    side = np.stack([np.full(400, a), rng.uniform(0, b, 400), rng.uniform(0, h, 400)], axis=1)
    yaw = np.deg2rad(yaw_deg)
    R = np.array([[np.cos(yaw), -np.sin(yaw), 0], [np.sin(yaw), np.cos(yaw), 0], [0, 0, 1]])
    g = summarise(np.concatenate([front, side]) @ R.T + np.array([1.0, 2.0, 0.0]), n_frames=4)
    assert g.length == pytest.approx(a, abs=0.01)
    assert g.width == pytest.approx(b, abs=0.01)


def test_validation_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="3x3"):
        validate_K(np.eye(4))
    with pytest.raises(ValueError, match="focal"):
        validate_K(np.zeros((3, 3)))
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(ValueError, match="orthonormal"):
        validate_pose(bad)
    with pytest.raises(ValueError, match="mask shape"):
        object_points_in_frame(
            np.ones((4, 4)), K, np.ones((5, 5), bool), PointParams(), np.random.default_rng(0)
        )


def _step_scene() -> tuple[np.ndarray, np.ndarray]:
    """A box face at 2 m in front of a wall at 3 m; the floor-like lower half recedes smoothly."""
    depth = np.full((60, 80), 3.0, np.float32)
    obj = np.zeros((60, 80), bool)
    obj[20:40, 30:50] = True
    depth[obj] = 2.0
    return depth, obj


def test_edge_bleed_onto_the_background_is_dropped() -> None:
    depth, obj = _step_scene()
    bleed = binary_dilation(obj, iterations=2)
    usable = bleed & np.isfinite(depth)
    kept = reject_edge_bleed(depth, bleed, usable, PointParams())
    assert np.array_equal(kept, obj)  # every ring pixel on the wall goes, every object pixel stays


def test_edge_test_keeps_receding_surfaces_and_thin_parts() -> None:
    depth, obj = _step_scene()
    # a surface receding 4 cm per row (a table top at a grazing angle) inside the mask
    rows = np.arange(20, 40)
    depth[20:40, 30:50] = (1.5 + 0.04 * (rows - 20))[:, None]
    # a thin far part (a leg behind) cut from the rest by a jump but in front of the wall
    depth[20:40, 52:54] = 2.6
    mask = obj.copy()
    mask[20:40, 52:54] = True
    kept = reject_edge_bleed(depth, mask, mask.copy(), PointParams())
    assert np.array_equal(kept, mask)


def test_summarise_needs_points() -> None:
    with pytest.raises(ValueError, match="at least 3 points"):
        summarise(np.zeros((2, 3)), 1)


def test_occluder_spill_cluster_is_dropped_but_thin_parts_stay() -> None:
    rng = np.random.default_rng(1)
    box = rng.uniform([0, 0, 0], [0.4, 0.3, 0.3], (3000, 3))
    pole = np.column_stack([np.full(200, 0.2), np.full(200, 0.15), np.linspace(0.3, 1.8, 200)])
    spill = rng.uniform([1.2, 0.1, 0.4], [1.3, 0.2, 0.5], (40, 3))  # mask spill on an occluder 1 m away
    stray = np.array([[3.0, 3.0, 3.0]])
    kept = keep_main_clusters(drop_isolated(np.concatenate([box, pole, spill, stray])))
    assert len(kept) == 3200
    g = summarise(np.concatenate([box, pole, spill, stray]), 1)
    assert g.height == pytest.approx(1.8, abs=0.03)
    assert g.center[0] == pytest.approx(0.2, abs=0.03)


def test_drop_isolated_is_the_ball_count_test() -> None:
    """Same points as the definition (≥ 4 points, self included, within 5 cm), counted by brute force."""
    rng = np.random.default_rng(3)
    pts = np.concatenate([rng.normal(0.0, 0.04, (1500, 3)), rng.uniform(-1.0, 1.0, (200, 3))])
    d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    want = pts[(d <= 0.05).sum(axis=1) >= 4]
    assert np.array_equal(drop_isolated(pts), want)


@pytest.mark.parametrize("radius", [1, 2, 3, 5])
def test_eroded_disk_is_the_distance_transform_test(radius: int) -> None:
    """Reference: scipy's Euclidean distance transform with the outside of the array as background
    (what the edge-bleed test used before), ``distance > radius``; masks touch the array border."""
    from scipy.ndimage import distance_transform_edt

    rng = np.random.default_rng(radius)
    for _ in range(5):
        mask = binary_dilation(rng.random((40, 50)) < 0.02, iterations=int(rng.integers(2, 7)))
        mask[:, :3] = True  # touches the left edge
        want = distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1] > radius
        np.testing.assert_array_equal(eroded_disk(mask, radius), want)
    # Hand case: a 7×7 square keeps only its centre pixel for radius 3 (every other pixel is ≤ 3 px
    # from the outside).
    sq = np.zeros((9, 9), bool)
    sq[1:8, 1:8] = True
    assert np.flatnonzero(eroded_disk(sq, 3)).tolist() == [4 * 9 + 4]


def test_object_points_do_not_depend_on_the_image_around_the_mask() -> None:
    """The extraction works on the mask's box: growing the image (no depth, no mask beyond the old
    right/bottom edge; the principal point stays) must give the very same points and subsample."""
    rng = np.random.default_rng(0)
    depth = np.full((80, 100), 3.0, np.float32) + rng.normal(0, 0.01, (80, 100)).astype(np.float32)
    depth[30:60, 20:70] = 1.5
    mask = np.zeros((80, 100), bool)
    mask[28:62, 18:72] = True  # spills 2 px onto the background
    params = PointParams(max_points_per_frame=500)
    a, a_err = object_points_in_frame(depth, K, mask, params, np.random.default_rng(1))
    big_d = np.full((160, 220), np.nan, np.float32)
    big_d[:80, :100] = depth
    big_m = np.zeros((160, 220), bool)
    big_m[:80, :100] = mask
    b, b_err = object_points_in_frame(big_d, K, big_m, params, np.random.default_rng(1))
    assert a.shape[0] > 400
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a_err, b_err)
    # Depth 1.5 m on the object (set above): the spilled background pixels were dropped.
    assert np.all(np.abs(a[:, 2] - 1.5) < 0.1)

"""Ground plane by iterative RANSAC plane removal (RynnEC §3.1.3), chosen against gravity.

The paper runs RANSAC ten times, removing each plane's inliers, and keeps the plane whose normal is
closest to the camera's up axis. With a gravity-aligned world frame (TF) every horizontal surface
(floor, table top, seat) matches gravity almost equally well, so among the planes within
``max_tilt_deg`` of the up direction we keep the *lowest* one with enough support: the floor.
Without poses the up direction is the camera-up prior (−y of the optical frame), as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Plane:
    """Plane ``normal · p = offset`` with its support; ``sample`` holds some of its inlier points."""

    normal: np.ndarray
    offset: float
    n_inliers: int
    sample: np.ndarray | None = field(default=None, repr=False)

    def rotated(self, R: np.ndarray) -> Plane:
        """The same plane in a frame rotated by ``R`` about the origin."""
        sample = None if self.sample is None else self.sample @ R.T
        return Plane(R @ self.normal, self.offset, self.n_inliers, sample)

    def height(self, pts: np.ndarray) -> np.ndarray:
        """Signed distance of points above the plane (along its normal)."""
        return np.asarray(pts) @ self.normal - self.offset


@dataclass
class GroundParams:
    """RANSAC settings; thresholds are metres."""

    n_planes: int = 10
    n_hypotheses: int = 200
    inlier_threshold_m: float = 0.03
    max_tilt_deg: float = 15.0
    prior_max_tilt_deg: float = 45.0  # camera-up prior: a robot head pitches by tens of degrees
    min_support: float = 0.02
    min_inliers: int = 150
    max_points: int = 30000
    seed: int = 0


def _fit_plane_lsq(pts: np.ndarray) -> tuple[np.ndarray, float]:
    centroid = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - centroid, full_matrices=False)
    n = vt[-1]
    return n, float(n @ centroid)


def _abs_distances(
    pts_t: np.ndarray, normals: np.ndarray, offsets: np.ndarray, chunk: int = 16
) -> np.ndarray:
    """``|normals[h] · p − offsets[h]|`` for every hypothesis ``h`` (rows) and point ``p`` (columns).

    ``pts_t`` is 3×N (coordinates as rows). Written as three multiply-adds over blocks of ``chunk``
    hypotheses instead of a matrix product: a product with an inner dimension of 3 gains nothing from
    BLAS, whose threads only contend on a shared machine, and the blocks stay in cache.
    """
    out = np.empty((normals.shape[0], pts_t.shape[1]))
    for i in range(0, normals.shape[0], chunk):
        n = normals[i : i + chunk]
        d = out[i : i + chunk]
        np.multiply(n[:, 0:1], pts_t[0], out=d)
        d += n[:, 1:2] * pts_t[1]
        d += n[:, 2:3] * pts_t[2]
        d -= offsets[i : i + chunk, None]
        np.abs(d, out=d)
    return out


def _inliers(pts_t: np.ndarray, normal: np.ndarray, offset: float, threshold: float) -> np.ndarray:
    return _abs_distances(pts_t, normal[None, :], np.array([offset]))[0] < threshold


def ransac_plane(
    pts: np.ndarray,
    threshold: float,
    n_hypotheses: int,
    rng: np.random.Generator,
    score_points: int = 4096,
    finalists: int = 8,
) -> tuple[np.ndarray, float, np.ndarray] | None:
    """Best plane of ``pts`` by RANSAC, refined by least squares on its inliers.

    Returns ``(normal, offset, inlier_mask)`` or ``None`` when no non-degenerate sample exists.
    Hypotheses are first counted on a random subset of ``score_points`` points and only the
    ``finalists`` best are counted on all of them: the full N×H count was most of a new window's cost,
    and a subset of a few thousand points ranks planes of the size that matters (≥ 150 inliers) alike.
    """
    n = pts.shape[0]
    if n < 3:
        return None
    idx = rng.integers(0, n, size=(n_hypotheses, 3))
    a, b, c = pts[idx[:, 0]], pts[idx[:, 1]], pts[idx[:, 2]]
    normals = np.cross(b - a, c - a)
    norms = np.linalg.norm(normals, axis=1)
    ok = norms > 1e-9
    if not np.any(ok):
        return None
    normals = normals[ok] / norms[ok, None]
    offsets = np.einsum("ij,ij->i", normals, a[ok])
    pts_t = np.ascontiguousarray(pts.T)
    sub_t = pts_t if n <= score_points else pts_t[:, rng.choice(n, score_points, replace=False)]
    rough = np.count_nonzero(_abs_distances(sub_t, normals, offsets) < threshold, axis=1)
    top = np.argsort(-rough, kind="stable")[:finalists]
    counts = np.count_nonzero(_abs_distances(pts_t, normals[top], offsets[top]) < threshold, axis=1)
    best = int(top[int(np.argmax(counts))])
    inliers = _inliers(pts_t, normals[best], float(offsets[best]), threshold)
    if inliers.sum() >= 3:
        normal, offset = _fit_plane_lsq(pts[inliers])
        refined = _inliers(pts_t, normal, offset, threshold)
        if refined.sum() >= inliers.sum():
            return normal, offset, refined
    return normals[best], float(offsets[best]), inliers


def detect_planes(pts: np.ndarray, params: GroundParams) -> list[Plane]:
    """Up to ``n_planes`` planes found by RANSAC, removing each plane's inliers before the next."""
    rng = np.random.default_rng(params.seed)
    pts = np.asarray(pts, dtype=np.float64)
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    if pts.shape[0] > params.max_points:
        pts = pts[rng.choice(pts.shape[0], params.max_points, replace=False)]
    planes: list[Plane] = []
    remaining = pts
    for _ in range(params.n_planes):
        if remaining.shape[0] < params.min_inliers:
            break
        fit = ransac_plane(remaining, params.inlier_threshold_m, params.n_hypotheses, rng)
        if fit is None:
            break
        normal, offset, inliers = fit
        if inliers.sum() < params.min_inliers:
            break
        idx = np.flatnonzero(inliers)
        if idx.size > 1000:
            idx = rng.choice(idx, 1000, replace=False)
        planes.append(
            Plane(normal=normal, offset=offset, n_inliers=int(inliers.sum()), sample=remaining[idx])
        )
        remaining = remaining[~inliers]
    return planes


def choose_ground(
    planes: list[Plane], up: np.ndarray, n_points: int, params: GroundParams, max_tilt_deg: float
) -> Plane | None:
    """Lowest plane along ``up`` whose normal is within ``max_tilt_deg`` of it and has support."""
    up = np.asarray(up, dtype=np.float64)
    up = up / np.linalg.norm(up)
    cos_max = np.cos(np.deg2rad(max_tilt_deg))
    candidates: list[Plane] = []
    for p in planes:
        normal, offset = p.normal, p.offset
        if normal @ up < 0:
            normal, offset = -normal, -offset
        if normal @ up >= cos_max and p.n_inliers >= params.min_support * n_points:
            candidates.append(Plane(normal=normal, offset=offset, n_inliers=p.n_inliers, sample=p.sample))
    if not candidates:
        return None
    # A plane's height along up at the origin is offset / (n·up); the floor is the lowest.
    return min(candidates, key=lambda p: p.offset / float(p.normal @ up))


def find_ground(
    pts: np.ndarray, up: np.ndarray, params: GroundParams | None = None, from_prior: bool = False
) -> Plane | None:
    """Ground plane of a point cloud given the up direction: gravity, or the camera-up prior.

    With the prior (``from_prior``) the tolerance is ``prior_max_tilt_deg`` because the camera's
    pitch is unknown; with gravity from TF it is the tight ``max_tilt_deg``.
    """
    params = params or GroundParams()
    planes = detect_planes(pts, params)
    n = min(int(np.asarray(pts).shape[0]), params.max_points)
    tilt = params.prior_max_tilt_deg if from_prior else params.max_tilt_deg
    return choose_ground(planes, up, n, params, tilt)


def rotation_aligning(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Smallest rotation taking unit vector ``a`` onto unit vector ``b`` (Rodrigues)."""
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    c = float(a @ b)
    if np.linalg.norm(v) < 1e-12:
        if c > 0:
            return np.eye(3)
        # 180°: rotate about any axis perpendicular to a.
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-6:
            axis = np.cross(a, [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        return 2 * np.outer(axis, axis) - np.eye(3)
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + vx + vx @ vx * (1 / (1 + c))

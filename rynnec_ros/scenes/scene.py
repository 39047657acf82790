"""Synthetic indoor scenes with exact geometry: primitives, a camera walk, numpy ray casting.

The scene model is the ground truth of the spatial evaluation: answers come from the primitives'
known poses and sizes, never from the rendered depth. World frame = ``odom``: z up, floor at z = 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Rotation from the camera_link frame (x forward, y left, z up) to the optical frame (z forward,
# x right, y down): columns are the optical axes expressed in camera_link.
LINK_R_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def yaw_matrix(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def pitch_matrix(pitch: float) -> np.ndarray:
    """Rotation about y; positive pitch tilts the x axis downward (REP 103)."""
    c, s = np.cos(pitch), np.sin(pitch)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def make_T(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


@dataclass
class Box:
    """Box with centre ``center`` (world), full sizes ``size`` along its own axes, rotated by ``yaw``."""

    center: np.ndarray
    size: np.ndarray
    yaw: float = 0.0

    def intersect(self, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ray parameters of the first hit (inf when missed) and world normals, for rays o + t·d."""
        R = yaw_matrix(self.yaw)
        ol = (o - self.center) @ R  # R^T (o - c) for row vectors
        dl = d @ R
        half = self.size / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (-half - ol) / dl
            t2 = (half - ol) / dl
        tlo = np.minimum(t1, t2)
        thi = np.maximum(t1, t2)
        tlo = np.where(np.isnan(tlo), -np.inf, tlo)
        thi = np.where(np.isnan(thi), np.inf, thi)
        tmin = tlo.max(axis=1)
        tmax = thi.min(axis=1)
        hit = (tmax >= tmin) & (tmin > 1e-6)
        t = np.where(hit, tmin, np.inf)
        axis = tlo.argmax(axis=1)
        nl = np.zeros_like(dl)
        nl[np.arange(len(axis)), axis] = -np.sign(dl[np.arange(len(axis)), axis])
        return t, nl @ R.T

    def closest_point(self, p: np.ndarray) -> np.ndarray:
        R = yaw_matrix(self.yaw)
        local = (p - self.center) @ R
        return np.clip(local, -self.size / 2, self.size / 2) @ R.T + self.center

    def corners(self) -> np.ndarray:
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        return (signs * self.size / 2) @ yaw_matrix(self.yaw).T + self.center


@dataclass
class Cylinder:
    """Upright cylinder: ``center`` is the centre of its axis, ``radius`` and full ``height``."""

    center: np.ndarray
    radius: float
    height: float

    def intersect(self, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        oc = o - self.center
        z0, z1 = -self.height / 2, self.height / 2
        a = d[:, 0] ** 2 + d[:, 1] ** 2
        b = 2 * (oc[..., 0] * d[:, 0] + oc[..., 1] * d[:, 1])
        c = oc[..., 0] ** 2 + oc[..., 1] ** 2 - self.radius**2
        disc = b * b - 4 * a * c
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = (-b - np.sqrt(np.maximum(disc, 0))) / (2 * a)
            zs = oc[..., 2] + ts * d[:, 2]
            side = (disc >= 0) & (a > 1e-12) & (ts > 1e-6) & (zs >= z0) & (zs <= z1)
            t_side = np.where(side, ts, np.inf)
            best = t_side.copy()
            normal = np.zeros_like(d)
            hit_side = oc + t_side[:, None] * d
            normal[:, :2] = np.where(side[:, None], hit_side[:, :2] / self.radius, 0.0)
            for zc, nz in ((z1, 1.0), (z0, -1.0)):
                tc = (zc - oc[..., 2]) / d[:, 2]
                px = oc[..., 0] + tc * d[:, 0]
                py = oc[..., 1] + tc * d[:, 1]
                cap = (tc > 1e-6) & (px**2 + py**2 <= self.radius**2) & (tc < best)
                best = np.where(cap, tc, best)
                normal = np.where(cap[:, None], np.array([0.0, 0.0, nz]), normal)
        return best, normal

    def closest_point(self, p: np.ndarray) -> np.ndarray:
        q = p - self.center
        r = np.hypot(q[0], q[1])
        scale = min(1.0, self.radius / r) if r > 0 else 0.0
        z = np.clip(q[2], -self.height / 2, self.height / 2)
        return self.center + np.array([q[0] * scale, q[1] * scale, z])

    def corners(self) -> np.ndarray:
        ang = np.linspace(0, 2 * np.pi, 16, endpoint=False)
        ring = np.stack([np.cos(ang), np.sin(ang)], axis=1) * self.radius
        pts = [
            np.column_stack([ring + self.center[:2], np.full(16, self.center[2] + s * self.height / 2)])
            for s in (-1, 1)
        ]
        return np.concatenate(pts)


Primitive = Box | Cylinder


@dataclass
class SceneObject:
    """A labelled object made of primitives; ``yaw`` orients its footprint box (for length/width)."""

    object_id: int
    label: str
    parts: list[Primitive]
    color: tuple[int, int, int]
    yaw: float = 0.0

    def local_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        pts = np.concatenate([p.corners() for p in self.parts])
        R = yaw_matrix(self.yaw)
        local = pts @ R  # into the object's yaw frame
        return local.min(axis=0), local.max(axis=0)

    @property
    def center(self) -> np.ndarray:
        lo, hi = self.local_bounds()
        return ((lo + hi) / 2) @ yaw_matrix(self.yaw).T

    @property
    def height(self) -> float:
        lo, hi = self.local_bounds()
        return float(hi[2] - lo[2])

    @property
    def sigma_m(self) -> float:
        """The standard uncertainty of a face's position: none, the scene model is exact."""
        return 0.0

    @property
    def footprint(self) -> tuple[float, float]:
        """(length, width): long and short side of the horizontal bounding box in the object frame."""
        lo, hi = self.local_bounds()
        a, b = float(hi[0] - lo[0]), float(hi[1] - lo[1])
        return max(a, b), min(a, b)

    @property
    def z_min(self) -> float:
        return float(self.local_bounds()[0][2])

    @property
    def z_max(self) -> float:
        return float(self.local_bounds()[1][2])

    def footprint_corners(self) -> np.ndarray:
        """4×2 corners (world xy, in order around) of the horizontal bounding box in the object frame."""
        lo, hi = self.local_bounds()
        local = np.array([[lo[0], lo[1], 0.0], [hi[0], lo[1], 0.0], [hi[0], hi[1], 0.0], [lo[0], hi[1], 0.0]])
        return (local @ yaw_matrix(self.yaw).T)[:, :2]

    @property
    def length(self) -> float:
        return self.footprint[0]

    @property
    def width(self) -> float:
        return self.footprint[1]

    def nearest_distance(self, p: np.ndarray) -> float:
        return float(min(np.linalg.norm(part.closest_point(p) - p) for part in self.parts))


@dataclass
class Room:
    """Axis-aligned room centred at the origin: floor z = 0, walls at ±x_half/±y_half, ceiling."""

    x_half: float = 3.0
    y_half: float = 2.5
    ceiling: float = 2.6

    def intersect(self, o: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Exit distance of rays from inside, the normal facing the room and the hit surface index."""
        lo = np.array([-self.x_half, -self.y_half, 0.0])
        hi = np.array([self.x_half, self.y_half, self.ceiling])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(d > 0, (hi - o) / d, np.where(d < 0, (lo - o) / d, np.inf))
        axis = t.argmin(axis=1)
        tt = t[np.arange(len(axis)), axis]
        n = np.zeros_like(d)
        n[np.arange(len(axis)), axis] = -np.sign(d[np.arange(len(axis)), axis])
        return tt, n, axis


@dataclass
class Camera:
    width: int
    height: int
    K: np.ndarray

    @classmethod
    def from_fov(cls, width: int, height: int, hfov_deg: float = 69.0) -> Camera:
        f = width / 2 / np.tan(np.deg2rad(hfov_deg) / 2)
        K = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1.0]])
        return cls(width, height, K)


@dataclass
class Scene:
    room: Room
    objects: list[SceneObject]
    camera: Camera
    # per frame: odom_T_base (planar), base_T_camera_link (lift + pitch)
    base_poses: list[np.ndarray] = field(default_factory=list)
    head_poses: list[np.ndarray] = field(default_factory=list)

    def world_T_camera(self, i: int) -> np.ndarray:
        return self.base_poses[i] @ self.head_poses[i] @ make_T(LINK_R_OPTICAL, np.zeros(3))

    def object(self, object_id: int) -> SceneObject:
        for o in self.objects:
            if o.object_id == object_id:
                return o
        raise KeyError(object_id)


@dataclass
class Rendered:
    rgb: np.ndarray
    depth: np.ndarray  # metres along the optical axis, float32
    ids: np.ndarray  # 0 = room, else object_id


def _pixel_subset(part: Primitive, T: np.ndarray, cam: Camera) -> np.ndarray | None:
    """Flat pixel indices inside the part's projected bounding box (``None``: test every pixel)."""
    pc = (part.corners() - T[:3, 3]) @ T[:3, :3]
    if np.any(pc[:, 2] < 0.05):
        return None
    u = cam.K[0, 0] * pc[:, 0] / pc[:, 2] + cam.K[0, 2]
    v = cam.K[1, 1] * pc[:, 1] / pc[:, 2] + cam.K[1, 2]
    c0, c1 = max(int(np.floor(u.min())) - 1, 0), min(int(np.ceil(u.max())) + 2, cam.width)
    r0, r1 = max(int(np.floor(v.min())) - 1, 0), min(int(np.ceil(v.max())) + 2, cam.height)
    if c0 >= c1 or r0 >= r1:
        return np.zeros(0, dtype=np.int64)
    rows, cols = np.mgrid[r0:r1, c0:c1]
    return (rows * cam.width + cols).ravel()


def render(scene: Scene, T: np.ndarray) -> Rendered:
    """Ray cast one view: first hit per pixel among the room and every object primitive."""
    cam = scene.camera
    v, u = np.mgrid[0 : cam.height, 0 : cam.width]
    ones = np.ones(u.shape)
    dc = np.stack([(u - cam.K[0, 2]) / cam.K[0, 0], (v - cam.K[1, 2]) / cam.K[1, 1], ones], -1)
    d = dc.reshape(-1, 3) @ T[:3, :3].T  # not normalised: t is then the optical-axis depth
    o = T[:3, 3]
    t, normal, surface = scene.room.intersect(np.broadcast_to(o, d.shape), d)
    ids = np.zeros(len(t), dtype=np.int32)
    for obj in scene.objects:
        for part in obj.parts:
            sub = _pixel_subset(part, T, cam)
            if sub is None:
                sub = np.arange(len(t))
            if sub.size == 0:
                continue
            tp, np_ = part.intersect(o, d[sub])
            closer = tp < t[sub]
            idx = sub[closer]
            t[idx] = tp[closer]
            normal[idx] = np_[closer]
            ids[idx] = obj.object_id
    hit = o + t[:, None] * d
    light = np.array([0.3, 0.5, 0.81])
    shade = 0.45 + 0.55 * np.abs(normal @ light)
    palette = {obj.object_id: np.array(obj.color, float) for obj in scene.objects}
    base = np.empty((len(t), 3))
    checker = ((np.floor(hit[:, 0] / 0.5) + np.floor(hit[:, 1] / 0.5)) % 2)[:, None]
    floor = np.array([150.0, 120.0, 90.0]) + 30 * checker
    wall = np.array([205.0, 200.0, 190.0])
    room_col = np.where((surface == 2)[:, None] & (hit[:, 2] < 0.5)[:, None], floor, wall)
    base[:] = room_col
    for oid, col in palette.items():
        base[ids == oid] = col
    rgb = np.clip(base * shade[:, None], 0, 255).astype(np.uint8).reshape(cam.height, cam.width, 3)
    return Rendered(
        rgb=rgb,
        depth=t.reshape(cam.height, cam.width).astype(np.float32),
        ids=ids.reshape(cam.height, cam.width),
    )


def degrade_depth(depth: np.ndarray, noise: float, holes: float, rng: np.random.Generator) -> np.ndarray:
    """Multiplicative Gaussian noise (σ = ``noise``·depth) and clustered NaN holes (fraction ``holes``)."""
    out = depth.astype(np.float32).copy()
    if noise > 0:
        out *= (1.0 + noise * rng.standard_normal(out.shape)).astype(np.float32)
    if holes > 0:
        h, w = out.shape
        block = 4
        coarse = rng.random(((h + block - 1) // block, (w + block - 1) // block))
        field_ = np.kron(coarse, np.ones((block, block)))[:h, :w]
        field_ = 0.7 * field_ + 0.3 * rng.random((h, w))  # ragged block edges plus pinholes
        out[field_ > np.quantile(field_, 1.0 - holes)] = np.nan
    return out


# ---------------------------------------------------------------------------------- generation
_COLORS = [
    (200, 60, 50),
    (60, 150, 70),
    (50, 90, 190),
    (210, 170, 40),
    (140, 70, 160),
    (40, 170, 170),
    (230, 120, 40),
    (120, 120, 120),
    (170, 100, 60),
    (90, 200, 120),
]


def _table(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    L, W, H = rng.uniform(1.0, 1.4), rng.uniform(0.6, 0.8), rng.uniform(0.70, 0.78)
    R = yaw_matrix(yaw)
    top = Box(np.array([x, y, H - 0.02]), np.array([L, W, 0.04]), yaw)
    parts: list[Primitive] = [top]
    for sx in (-1, 1):
        for sy in (-1, 1):
            off = R @ np.array([sx * (L / 2 - 0.05), sy * (W / 2 - 0.05), 0])
            parts.append(Box(np.array([x, y, (H - 0.04) / 2]) + off, np.array([0.05, 0.05, H - 0.04]), yaw))
    return "table", parts, max(L, W) / 2


def _chair(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    s, hs = rng.uniform(0.42, 0.5), rng.uniform(0.43, 0.48)
    R = yaw_matrix(yaw)
    parts: list[Primitive] = [Box(np.array([x, y, hs - 0.03]), np.array([s, s, 0.06]), yaw)]
    back = np.array([x, y, 0]) + R @ np.array([-s / 2 + 0.03, 0, 0])
    parts.append(Box(back + np.array([0, 0, hs + 0.22]), np.array([0.06, s, 0.44]), yaw))
    for sx in (-1, 1):
        for sy in (-1, 1):
            off = R @ np.array([sx * (s / 2 - 0.03), sy * (s / 2 - 0.03), 0])
            parts.append(Box(np.array([x, y, (hs - 0.06) / 2]) + off, np.array([0.04, 0.04, hs - 0.06]), yaw))
    return "chair", parts, s * 0.75


def _cabinet(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    L, W, H = rng.uniform(0.6, 1.0), rng.uniform(0.35, 0.5), rng.uniform(1.2, 1.9)
    return "cabinet", [Box(np.array([x, y, H / 2]), np.array([L, W, H]), yaw)], max(L, W) / 2


def _box(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    L, W, H = rng.uniform(0.35, 0.6), rng.uniform(0.3, 0.45), rng.uniform(0.3, 0.55)
    return "box", [Box(np.array([x, y, H / 2]), np.array([L, W, H]), yaw)], max(L, W) / 2


def _bin(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    r, H = rng.uniform(0.15, 0.22), rng.uniform(0.35, 0.6)
    return "trash bin", [Cylinder(np.array([x, y, H / 2]), r, H)], r


def _sofa(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    L, W = rng.uniform(1.4, 1.9), rng.uniform(0.75, 0.9)
    R = yaw_matrix(yaw)
    parts: list[Primitive] = [Box(np.array([x, y, 0.22]), np.array([L, W, 0.44]), yaw)]
    back = np.array([x, y, 0]) + R @ np.array([0, -W / 2 + 0.1, 0])
    parts.append(Box(back + np.array([0, 0, 0.6]), np.array([L, 0.2, 0.32]), yaw))
    return "sofa", parts, L / 2


def _lamp(rng: np.random.Generator, x: float, y: float, yaw: float) -> tuple[str, list[Primitive], float]:
    H = rng.uniform(1.3, 1.7)
    return (
        "floor lamp",
        [
            Cylinder(np.array([x, y, 0.02]), 0.16, 0.04),
            Cylinder(np.array([x, y, H / 2]), 0.025, H),
            Cylinder(np.array([x, y, H + 0.12]), 0.2, 0.24),
        ],
        0.2,
    )


_FLOOR_MAKERS = [_table, _chair, _cabinet, _box, _bin, _sofa, _lamp]


def _place(
    rng: np.random.Generator,
    room: Room,
    radius: float,
    taken: list[tuple[float, float, float]],
    path_xy: np.ndarray,
    against_wall: bool,
) -> tuple[float, float] | None:
    """Rejection-sample a footprint centre clear of other objects and of the camera walk."""
    for _ in range(300):
        if against_wall:
            side = rng.integers(4)
            along = rng.uniform(-1, 1)
            m = radius + 0.05
            if side < 2:
                x = (room.x_half - m) * (1 if side == 0 else -1)
                y = along * (room.y_half - m)
            else:
                y = (room.y_half - m) * (1 if side == 2 else -1)
                x = along * (room.x_half - m)
        else:
            x = rng.uniform(-1, 1) * (room.x_half - 1.2)
            y = rng.uniform(-1, 1) * (room.y_half - 1.2)
        if not (abs(x) + radius < room.x_half and abs(y) + radius < room.y_half):
            continue
        if np.min(np.hypot(path_xy[:, 0] - x, path_xy[:, 1] - y)) < radius + 0.45:
            continue
        if all(np.hypot(x - tx, y - ty) > radius + tr + 0.1 for tx, ty, tr in taken):
            return float(x), float(y)
    return None


def make_scene(
    seed: int = 0, n_frames: int = 16, width: int = 320, height: int = 240, n_objects: int = 7
) -> Scene:
    """Random room (about 6×5 m) with furniture along the walls and in the middle, and a camera walk.

    The camera walks part of an ellipse between the middle and the walls, looks mostly toward the
    middle with sweeping turns (including a quarter turn), and raises/lowers and tilts its head.
    Objects are placed clear of the walk, so the camera never stands inside furniture.
    """
    rng = np.random.default_rng(seed)
    room = Room(x_half=float(rng.uniform(2.8, 3.3)), y_half=float(rng.uniform(2.4, 2.8)))
    camera = Camera.from_fov(width, height)
    scene = Scene(room=room, objects=[], camera=camera)
    ax, ay = room.x_half - 1.0, room.y_half - 0.9
    phase0 = float(rng.uniform(0, 2 * np.pi))
    span = float(rng.uniform(1.0, 1.5)) * np.pi
    for i in range(n_frames):
        s = i / max(1, n_frames - 1)
        th = phase0 + span * s
        x, y = ax * np.cos(th), ay * np.sin(th)
        to_centre = np.arctan2(-y, -x)
        yaw = to_centre + 0.6 * np.sin(2 * np.pi * s * 1.5) + (np.pi / 2 if 0.4 < s < 0.6 else 0.0)
        lift = 1.05 + 0.35 * (0.5 + 0.5 * np.sin(2 * np.pi * s + phase0))
        pitch = np.deg2rad(22 + 10 * np.sin(2 * np.pi * s * 2))
        scene.base_poses.append(make_T(yaw_matrix(yaw), np.array([x, y, 0.0])))
        scene.head_poses.append(make_T(pitch_matrix(pitch), np.array([0.0, 0.0, lift])))
    fine = np.linspace(phase0, phase0 + span, 200)
    path_xy = np.stack([ax * np.cos(fine), ay * np.sin(fine)], axis=1)

    taken: list[tuple[float, float, float]] = []
    order = list(rng.permutation(len(_FLOOR_MAKERS)))
    makers = [_FLOOR_MAKERS[i] for i in order][: max(1, n_objects - 1)]
    for maker in makers:
        against = maker in (_cabinet, _sofa, _lamp) or (maker in (_box, _bin) and rng.random() < 0.5)
        yaw0 = float(rng.uniform(-np.pi, np.pi))
        label, parts, radius = maker(rng, 0.0, 0.0, yaw0)
        spot = _place(rng, room, radius, taken, path_xy, against)
        if spot is None and against:
            spot = _place(rng, room, radius, taken, path_xy, False)
        if spot is None:
            continue
        for p in parts:
            p.center = p.center + np.array([spot[0], spot[1], 0.0])
        taken.append((spot[0], spot[1], radius))
        color = _COLORS[len(scene.objects) % len(_COLORS)]
        scene.objects.append(SceneObject(len(scene.objects) + 1, label, parts, color, yaw0))
    table = next((o for o in scene.objects if o.label == "table"), None)
    if table is not None:  # a vase on the table gives above/below pairs
        top = table.parts[0]
        assert isinstance(top, Box)
        off = yaw_matrix(top.yaw) @ np.array([rng.uniform(-0.2, 0.2) * top.size[0], 0.0, 0.0])
        r, h = float(rng.uniform(0.08, 0.11)), float(rng.uniform(0.25, 0.35))
        z = top.center[2] + top.size[2] / 2 + h / 2
        vase = Cylinder(np.array([top.center[0] + off[0], top.center[1] + off[1], z]), r, h)
        color = _COLORS[len(scene.objects) % len(_COLORS)]
        scene.objects.append(SceneObject(len(scene.objects) + 1, "vase", [vase], color, 0.0))
    return scene

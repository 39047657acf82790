"""Task solvers on hand-made facts: values, units, choices and RynnEC-style sentences."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from rynnec_ros.core.parsing import parse_quantity
from rynnec_ros.scenes.scene import LINK_R_OPTICAL, make_T, yaw_matrix
from rynnec_ros.spatial.ground import Plane
from rynnec_ros.spatial.plan import solve
from rynnec_ros.spatial.solvers import Scene, Undeterminable


@dataclass
class Obj:
    center: np.ndarray
    height: float
    length: float
    width: float
    near: float
    sigma_m: float = 0.0

    def nearest_distance(self, p: np.ndarray) -> float:
        return self.near

    @property
    def z_min(self) -> float:
        return float(self.center[2] - self.height / 2)

    @property
    def z_max(self) -> float:
        return float(self.center[2] + self.height / 2)

    def footprint_corners(self) -> np.ndarray:
        """Axis-aligned length (x) × width (y) rectangle around the centre."""
        hx, hy = self.length / 2, self.width / 2
        return self.center[:2] + np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])


# me: camera at (0, 0, 1.5) facing +x (yaw 0), so +y is my left and -y my right
ME = make_T(yaw_matrix(0.0) @ LINK_R_OPTICAL, np.array([0.0, 0.0, 1.5]))
A = Obj(np.array([3.0, 0.0, 1.5]), 0.4, 0.5, 0.3, 2.8)  # ahead, 3 m, at eye height
B = Obj(np.array([0.0, -2.0, 0.5]), 1.0, 1.2, 0.6, 0.7)  # right, low
C = Obj(np.array([-4.0, 3.0, 1.0]), 2.0, 0.8, 0.8, 4.5)  # behind-left
D = Obj(
    np.array([0.1, -2.0, 1.2]), 0.4, 0.3, 0.2, 0.9
)  # resting on B: bottom 1.0 = B's top, inside its footprint
FLOOR = Plane(np.array([0.0, 0.0, 1.0]), 0.0, 0)


def _scene(*objs: Obj, path: np.ndarray | None = None, ground: Plane | None = FLOOR) -> Scene:
    return Scene(me=ME, objects=dict(enumerate(objs)), ground=ground, camera_path=path)


def test_quantities() -> None:
    a = solve("distance_to_camera", _scene(A), {}, 0.8)
    assert (a.value, a.unit) == (pytest.approx(3.0), "m")
    assert a.text == "<object0> is 3.00 meters away from me."
    assert parse_quantity(a.text) == (3.0, "m")
    assert solve("center_distance", _scene(A, B), {}, 0.8).value == pytest.approx(np.sqrt(9 + 4 + 1))
    assert solve("height_from_ground", _scene(A), {}, 0.8).value == pytest.approx(1.5)
    assert solve("height_from_ground", _scene(A), {"point": "top"}, 0.8).value == pytest.approx(1.7)
    assert solve("height_from_ground", _scene(A), {"point": "bottom"}, 0.8).value == pytest.approx(1.3)
    cm = solve("height_from_ground", _scene(A), {"unit": "cm"}, 0.8)
    assert (cm.value, cm.unit) == (pytest.approx(150.0), "cm")
    # tops: B 1.0 m, C 2.0 m
    assert solve("height_difference", _scene(B, C), {"point": "top"}, 0.8).value == pytest.approx(1.0)
    hd = solve("height_difference", _scene(B, A), {}, 0.8)
    assert hd.value == pytest.approx(1.0)
    assert "lower than" in hd.text
    assert solve("object_height", _scene(C), {}, 0.8).value == pytest.approx(2.0)
    assert solve("object_length", _scene(B), {}, 0.8).value == pytest.approx(1.2)
    w = solve("object_width", _scene(B), {}, 0.8)
    assert w.text == "The width of <object0> is approximately 0.60 meters."


def test_choices() -> None:
    assert solve("closer_to_camera", _scene(A, B), {}, 0.8).object_ids == [1]
    assert solve("closest_to_camera", _scene(C, A, B), {}, 0.8).object_ids == [2]
    t = solve("tallest_choice", _scene(A, B, C), {}, 0.8)
    assert t.object_ids == [2]
    assert t.text.startswith("<object2> is the tallest")
    assert solve("tallest_choice", _scene(A, B, C), {"order": "min"}, 0.8).object_ids == [0]
    assert solve("tallest_choice", _scene(A, B), {"dim": "length"}, 0.8).object_ids == [1]
    assert solve("closer_to_camera", _scene(A, B), {"order": "far"}, 0.8).object_ids == [0]
    yn = solve("closer_to_camera", _scene(A, B), {"form": "yesno"}, 0.8)
    assert yn.text.startswith("No")  # A (3 m) is not closer than B (sqrt(4 + 1) m)


def test_predicates_from_my_viewpoint() -> None:
    # A is 1 m higher than B but 3 m away in plan: higher, not above
    side_by_side = solve("above_predicate", _scene(A, B), {}, 0.8).text
    assert side_by_side.startswith("No") and "plan view" in side_by_side
    assert solve("above_predicate", _scene(D, B), {}, 0.8).text.startswith("Yes")
    assert solve("below_predicate", _scene(B, D), {}, 0.8).text.startswith("Yes")
    assert solve("above_choice", _scene(B, D), {}, 0.8).object_ids == [1]
    assert solve("above_choice", _scene(A, B), {}, 0.8).object_ids == []
    assert solve("higher_choice", _scene(A, B), {}, 0.8).object_ids == [0]
    # tops: A 1.7 m, D 1.4 m; bottoms: A 1.3 m, D 1.0 m
    assert solve("higher_choice", _scene(D, A), {"point": "top", "order": "min"}, 0.8).object_ids == [0]
    assert solve("side_of_me", _scene(B), {}, 0.8).text.startswith("Right")
    assert solve("side_of_me", _scene(C), {"side": "right"}, 0.8).text.startswith("No")
    assert solve("left_right_choice", _scene(C, B), {}, 0.8).text.startswith("Left")
    assert solve("leftmost_choice", _scene(A, B, C), {"side": "right"}, 0.8).object_ids == [1]
    # B is to my right, C to my left
    assert solve("left_predicate", _scene(C, B), {}, 0.8).text.startswith("Yes")
    assert solve("right_predicate", _scene(C, B), {}, 0.8).text.startswith("No")
    assert solve("right_predicate", _scene(B, A), {}, 0.8).text.startswith("Yes")


def test_directions() -> None:
    assert solve("direction_clock", _scene(B), {}, 0.8).value == 3
    assert solve("direction_clock", _scene(A), {}, 0.8).text == "<object0> is at my 12 o'clock position."
    d = solve("direction_degrees", _scene(C), {}, 0.8)
    assert d.value == pytest.approx(360 - np.degrees(np.arctan2(3, -4)))  # ≈ 216.9° clockwise
    assert "to my left" in d.text
    assert solve("rotate_to_face", _scene(B), {}, 0.8).value == pytest.approx(90.0)
    f = solve("future_direction_clock", _scene(A), {"turn": "left", "angle_deg": 90.0}, 0.8)
    assert (f.value, f.unit) == (3, "oclock")
    assert f.text == "<object0> will be at my 3 o'clock direction."
    right90 = {"turn": "right", "angle_deg": 90.0}
    assert solve("future_direction_degrees", _scene(B), right90, 0.8).value == pytest.approx(0.0)
    assert solve("rotate_to_face", _scene(B), {"direction": "ccw"}, 0.8).value == pytest.approx(270.0)
    with pytest.raises(Undeterminable, match="turn"):
        solve("future_direction_clock", _scene(A), {}, 0.8)
    # a half turn ends in the same pose either way: A dead ahead (12 o'clock) is behind, at 6, side unsaid;
    # any other turn needs its side
    half = solve("future_direction_clock", _scene(A), {"turn": None, "angle_deg": 180.0}, 0.8)
    assert half.value == 6
    with pytest.raises(Undeterminable, match="which way I turn"):
        solve("future_direction_clock", _scene(A), {"turn": None, "angle_deg": 90.0}, 0.8)


def test_reachability_and_walking() -> None:
    yes = solve("reachability", _scene(B), {}, 0.8)
    assert yes.text.startswith("Yes") and yes.value == pytest.approx(0.7)
    no = solve("reachability", _scene(A), {}, 0.8)
    assert no.text.startswith("No") and "0.80 meter" in no.text
    stated = solve("reachability", _scene(A), {"arm_length_m": 3.0}, 0.8)  # A's nearest point is 2.8 m away
    assert stated.text.startswith("Yes") and "stated 3.00 meter" in stated.text
    path = np.array([[0, 0, 1.2], [1, 0, 1.4], [1, 2, 1.0]])
    w = solve("walked_distance", _scene(path=path), {}, 0.8)
    assert w.value == pytest.approx(3.0)
    assert w.text == "I have walked 3.00 meters in total."


def test_height_needs_a_floor_but_difference_does_not() -> None:
    with pytest.raises(Undeterminable, match="floor"):
        solve("height_from_ground", _scene(A, ground=None), {}, 0.8)
    assert solve("height_difference", _scene(A, B, ground=None), {}, 0.8).value == pytest.approx(1.0)


def test_uncertainty_propagates_from_each_objects_face_sigma() -> None:
    """Face sigmas 2 cm (A) and 4 cm (B); by hand (docs/spatial.md, "Uncertainty"): a centre has σ/√2, a
    size √2·σ, independent objects add in quadrature; a choice's margin is the gap to the runner-up.
    A is 3 m ahead at (3, 0, 1.5), B at (0, -2, 0.5): distances 3 and √(4 + 1) = 2.2361 m from me."""
    a, b = replace(A, sigma_m=0.02), replace(B, sigma_m=0.04)
    dist = solve("distance_to_camera", _scene(a), {"unit": "cm"}, 0.8)
    assert (dist.uncertainty, dist.uncertainty_unit) == (pytest.approx(100 * 0.02 / np.sqrt(2)), "cm")
    assert dist.margin_m is None and dist.confidence is None
    size = solve("object_width", _scene(b), {}, 0.8)
    assert size.uncertainty == pytest.approx(np.sqrt(2) * 0.04)
    top = solve("height_from_ground", _scene(b), {"point": "top"}, 0.8)
    assert top.uncertainty == pytest.approx(0.04)  # a face
    apart = solve("center_distance", _scene(a, b), {}, 0.8)
    assert apart.uncertainty == pytest.approx(np.sqrt(0.02**2 / 2 + 0.04**2 / 2))
    closer = solve("closer_to_camera", _scene(a, b), {}, 0.8)
    assert closer.margin_m == pytest.approx(3.0 - np.sqrt(5.0))
    assert (closer.uncertainty, closer.uncertainty_unit) == (pytest.approx(np.sqrt(0.0002 + 0.0008)), "m")
    # Φ(0.7639 / 0.03162) = Φ(24.2): certain
    assert closer.confidence == pytest.approx(1.0)
    # B's bearing: 2 m to my right at 2 m horizontal distance, lateral σ 0.04/√2 → atan(0.02828 / 2)
    bearing = solve("direction_degrees", _scene(b), {}, 0.8)
    assert bearing.uncertainty == pytest.approx(np.degrees(np.arctan2(0.04 / np.sqrt(2), 2.0)))
    clock = solve("direction_clock", _scene(b), {}, 0.8)
    assert (clock.uncertainty, clock.uncertainty_unit) == (pytest.approx(bearing.uncertainty / 30), "oclock")
    # D rests on B: D's bottom 1.0 m meets B's top 1.0 m, so its clearance from the 5 cm tolerance is
    # 0.05 m; to leave B's footprint D would have to move 0.4 m (y: D spans -2.1..-1.9 inside B's
    # -2.3..-1.7; x: 0.65 m), so the clearance decides: margin 0.05 m.
    on = solve("above_predicate", _scene(replace(D, sigma_m=0.03), b), {}, 0.8)
    assert on.text.startswith("Yes") and on.margin_m == pytest.approx(0.05)
    assert on.uncertainty == pytest.approx(0.05)  # √(0.03² + 0.04²)
    # Φ(0.05 / 0.05) = Φ(1) = 0.8413
    assert on.confidence == pytest.approx(0.8413, abs=1e-4)
    reach = solve("reachability", _scene(a), {}, 0.8)  # A's nearest surface 2.8 m: 2.0 m beyond the arm
    assert (reach.margin_m, reach.uncertainty) == (pytest.approx(2.0), pytest.approx(0.02))
    walked = solve("walked_distance", _scene(path=np.array([[0.0, 0, 0], [1, 0, 0]])), {}, 0.8)
    assert walked.uncertainty is None and walked.uncertainty_unit == ""

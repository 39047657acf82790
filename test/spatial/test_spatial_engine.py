"""SpatialEngine on rendered views of a small known scene (ground truth from the scene model)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rynnec_ros.core.types import Answer, Frame, Region, Request
from rynnec_ros.scenes.scene import (
    Box,
    Camera,
    Cylinder,
    Room,
    Scene,
    SceneObject,
    degrade_depth,
    make_T,
    pitch_matrix,
    render,
    yaw_matrix,
)
from rynnec_ros.spatial import SpatialEngine, SpatialParams, SpatialPlan, Unanswerable
from rynnec_ros.spatial.egocentric import bearing_cw_deg, heading, to_clock

BOX = SceneObject(
    1, "box", [Box(np.array([2.0, 0.6, 0.35]), np.array([0.6, 0.4, 0.7]), 0.3)], (200, 60, 50), 0.3
)
BIN = SceneObject(2, "bin", [Cylinder(np.array([1.6, -0.9, 0.25]), 0.2, 0.5)], (50, 90, 190))


def _scene() -> Scene:
    scene = Scene(room=Room(3.0, 2.5), objects=[BOX, BIN], camera=Camera.from_fov(160, 120))
    for x, y, yaw, lift in [(-1.0, 0.0, 0.1, 1.1), (-0.7, -0.4, 0.25, 1.3), (-0.4, 0.3, -0.2, 1.2)]:
        scene.base_poses.append(make_T(yaw_matrix(yaw), np.array([x, y, 0.0])))
        scene.head_poses.append(make_T(pitch_matrix(np.deg2rad(25)), np.array([0.0, 0.0, lift])))
    return scene


@pytest.fixture(scope="module")
def views() -> tuple[Scene, list[Frame], list[np.ndarray]]:
    scene = _scene()
    frames, ids = [], []
    for i in range(len(scene.base_poses)):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        frames.append(Frame(rgb=r.rgb, stamp_ns=i, depth=r.depth, K=scene.camera.K, world_T_camera=T))
        ids.append(r.ids)
    return scene, frames, ids


def _request(views, question: str, objs=(BOX,), task: str | None = None, **kw) -> Request:
    _, frames, ids = views
    regions = [
        Region(
            object_id=10 * o.object_id,
            masks={i: m == o.object_id for i, m in enumerate(ids) if (m == o.object_id).any()},
        )
        for o in objs
    ]
    return Request(question=question, frames=list(frames), regions=regions, task=task, **kw)


def _me(views) -> np.ndarray:
    return views[1][-1].world_T_camera


def test_distance_height_and_size_match_the_scene(views) -> None:
    engine = SpatialEngine()
    me = _me(views)
    d = engine.answer(_request(views, "How far is <object0> from you?"))
    assert d.source == "geometry" and d.task == "distance_to_camera" and d.unit == "m"
    assert d.value == pytest.approx(np.linalg.norm(BOX.center - me[:3, 3]), rel=0.05)
    assert d.object_ids == [10]
    h = engine.answer(_request(views, "How tall is <object0>?"))
    assert h.value == pytest.approx(0.7, rel=0.05)
    g = engine.answer(_request(views, "How high above the ground is <object0>?"))
    assert g.value == pytest.approx(0.35, rel=0.08)
    w = engine.answer(_request(views, "What is the width of <object0>?", objs=(BIN,)))
    assert w.value == pytest.approx(0.4, rel=0.15)


def test_direction_and_choice(views) -> None:
    engine = SpatialEngine()
    me = _me(views)
    clock = to_clock(bearing_cw_deg(me[:3, 3], heading(me), BIN.center))
    a = engine.answer(_request(views, "At what o'clock direction is <object0> relative to you?", objs=(BIN,)))
    assert (a.value, a.unit) == (clock, "oclock")
    closer = np.argmin([np.linalg.norm(o.center - me[:3, 3]) for o in (BOX, BIN)])
    c = engine.answer(
        _request(
            views,
            "Which is closer to you, <object0> or <object1>?",
            objs=(BOX, BIN),
            options=["<object0>", "<object1>"],
        )
    )
    assert c.option_index == closer
    assert c.object_ids == [10 * (closer + 1)]
    assert c.text.startswith(f"<object{closer}> is closer to me")


def test_noisy_depth_with_holes(views) -> None:
    engine = SpatialEngine()
    rng = np.random.default_rng(0)
    scene, frames, ids = views
    noisy = [dataclasses.replace(f, depth=degrade_depth(f.depth, 0.01, 0.05, rng)) for f in frames]
    req = _request((scene, noisy, ids), "How far is <object0> from you?")
    assert engine.answer(req).value == pytest.approx(np.linalg.norm(BOX.center - _me(views)[:3, 3]), rel=0.08)


def test_without_poses_the_last_frame_and_camera_up_prior_are_used(views) -> None:
    engine = SpatialEngine()
    scene, frames, ids = views
    unposed = [dataclasses.replace(f, world_T_camera=None) for f in frames]
    req = _request((scene, unposed, ids), "How far is <object0> from you?")
    assert isinstance(engine.plan(req), SpatialPlan)
    assert engine.answer(req).value == pytest.approx(np.linalg.norm(BOX.center - _me(views)[:3, 3]), rel=0.08)
    height = engine.answer(_request((scene, unposed, ids), "How tall is <object0>?"))
    assert height.value == pytest.approx(0.7, rel=0.1)
    walked = engine.answer(_request((scene, unposed, ids), "How far have you walked in total?", objs=()))
    assert walked.value is None and "pose" in walked.reason


def test_undeterminable_says_why_and_gives_no_number(views) -> None:
    engine = SpatialEngine()
    scene, frames, ids = views
    no_depth = [dataclasses.replace(f, depth=None) for f in frames]
    req = _request((scene, no_depth, ids), "How far is <object0> from you?")
    planned = engine.plan(req)
    assert isinstance(planned, Unanswerable) and "depth" in planned.reason and planned.plan is not None
    a = engine.answer(req)
    assert a.value is None and a.reason and a.source == "geometry"
    holes = [dataclasses.replace(f, depth=np.full_like(f.depth, np.nan)) for f in frames]
    b = engine.answer(_request((scene, holes, ids), "How far is <object0> from you?"))
    assert b.value is None and "valid depth" in b.reason


def test_walked_distance_from_poses(views) -> None:
    a = SpatialEngine().answer(_request(views, "How far have you walked in total?", objs=()))
    expected = np.hypot(0.3, 0.4) + np.hypot(0.3, 0.7)
    assert a.value == pytest.approx(expected, rel=1e-6)


def test_bad_input_raises_clear_errors(views) -> None:
    engine = SpatialEngine()
    req = _request(views, "How far is <object0> from you?")
    req.regions[0].masks = {0: np.ones((5, 5), bool)}
    with pytest.raises(ValueError, match="mask on frame 0 has shape"):
        engine.answer(req)
    scene, frames, ids = views
    small = [dataclasses.replace(f, depth=f.depth[::2, ::2]) for f in frames]
    with pytest.raises(ValueError, match="not registered"):
        engine.answer(_request((scene, small, ids), "How far is <object0> from you?"))
    # Questions it cannot map are answered with a reason, never raised and never given a number.
    for call in (engine.plan, engine.answer):  # a malformed task field is a caller error
        with pytest.raises(ValueError, match="unknown spatial task"):
            call(_request(views, "x", task="teleport"))
    for question in ("What colour is <object0>?", "Is <object0> above <object1>?"):
        a = engine.answer(_request(views, question))
        assert (
            a.task is None and a.value is None and a.reason.startswith("not a spatial question I can measure")
        )
    assert "needs 2 objects" in engine.answer(_request(views, "Is <object0> above <object1>?")).reason
    unmapped = engine.plan(_request(views, "What colour is <object0>?"))
    assert isinstance(unmapped, Unanswerable) and unmapped.plan is None
    with pytest.raises(ValueError, match="arm_length_m"):
        SpatialEngine(SpatialParams(arm_length_m=0))


def test_structured_task_wins_over_text(views) -> None:
    a = SpatialEngine().answer(_request(views, "tell me about <object0>", task="object_height"))
    assert a.task == "object_height" and a.value == pytest.approx(0.7, rel=0.05)


def test_reference_points_and_the_side_by_side_trap(views) -> None:
    """Scene model: BOX spans z 0..0.7 (centre 0.35), BIN z 0..0.5 (centre 0.25), 1.6 m apart in plan."""
    engine = SpatialEngine()
    top = engine.answer(_request(views, "How high is the top of <object0> above the floor?"))
    assert top.value == pytest.approx(0.7, abs=0.03) and "top" in top.text
    bottom = engine.answer(_request(views, "How far off the floor is the underside of <object0>?"))
    assert bottom.value == pytest.approx(0.0, abs=0.03)
    cm = engine.answer(_request(views, "How many centimeters tall is <object0>?"))
    assert (cm.unit, cm.value) == ("cm", pytest.approx(70.0, rel=0.05))
    # centres 10 cm apart but side by side on the floor: higher, not above
    above = engine.answer(_request(views, "Is <object0> above <object1>?", objs=(BOX, BIN)))
    assert above.text.startswith("No") and "plan view" in above.text
    higher = engine.answer(_request(views, "Which one is higher, <object0> or <object1>?", objs=(BOX, BIN)))
    assert higher.object_ids == [10] and "centre" in higher.text
    neither = engine.answer(
        _request(views, "Which one is above the other, <object0> or <object1>?", objs=(BOX, BIN))
    )
    assert neither.object_ids == [] and neither.text.startswith("Neither")


def test_sides_of_me_and_of_another_object(views) -> None:
    """Last camera at (-0.4, 0.3), yaw -0.2: rightward offsets BOX -0.77 m, BIN +0.78 m (by hand)."""
    engine = SpatialEngine()
    assert engine.answer(_request(views, "Is <object0> on my left or my right?")).text.startswith("Left")
    assert engine.answer(_request(views, "Is <object0> on your right?", objs=(BIN,))).text.startswith("Yes")
    q = "Is <object0> to the left or to the right of <object1>?"
    assert engine.answer(_request(views, q, objs=(BOX, BIN))).text.startswith("Left")
    flipped = engine.answer(
        _request(views, "Relative to <object0>, is <object1> on the left?", objs=(BOX, BIN))
    )
    assert flipped.text.startswith("No")  # the subject is BIN (<object1>), which is to the right of BOX


def test_stated_arm_length_overrides_the_parameter(views) -> None:
    """BOX's nearest face is about 2.1 m from the last camera position (scene model)."""
    engine = SpatialEngine(SpatialParams(arm_length_m=0.8))
    assert engine.answer(_request(views, "Can you reach <object0> without moving?")).text.startswith("No")
    stated = engine.answer(_request(views, "Can I reach <object0> if my arm is 5 meters long?"))
    assert stated.text.startswith("Yes") and "stated 5.00 meter" in stated.text
    planner = engine.answer(_request(views, "", task="reachability arm_length_m=5"))
    assert planner.text.startswith("Yes") and planner.task == "reachability"
    planned = engine.plan(_request(views, "Can I reach <object0> if my arm is 5 meters long?"))
    assert isinstance(planned, SpatialPlan)
    assert planned.parsed.structured() == "reachability arm_length_m=5"
    assert planned.reading == stated.reading == "reachability arm_length_m=5 objects=0"


def test_no_well_formed_question_raises(views) -> None:
    """Every paraphrase (both halves) and odd inputs get an answer or a reason, never an exception."""
    from rynnec_ros.eval.paraphrases import families

    engine = SpatialEngine()
    questions = [q for entries in families("original").values() for _, q in entries if "<object2>" not in q]
    questions += ["", "???", "<object0>", "What colour is <object0>?", "How far is <object7> from me?"]
    for question in questions:
        n = sum(f"<object{k}>" in question for k in range(2))
        req = _request(views, question, objs=(BOX, BIN)[: max(n, 1)])
        a = engine.answer(req)
        assert a.task is not None or a.reason.startswith("not a spatial question I can measure"), question
        planned = engine.plan(req)
        assert isinstance(planned, SpatialPlan) or planned.reason, question


def _dist(views, obj_index: int, objs, engine: SpatialEngine | None = None) -> Answer:
    engine = engine or SpatialEngine()
    return engine.answer(_request(views, f"How far is <object{obj_index}> from you?", objs=objs))


def test_an_objects_geometry_does_not_depend_on_the_other_regions_or_the_threads(views) -> None:
    """An object's point subsample is seeded by its own masks on the window, so the box's distance is
    the same number asked alone on four worker threads, or second of two regions on one thread.
    An invariance test: the reference is the same engine asked another way (accuracy against the scene
    model is ``test_distance_height_and_size_match_the_scene``)."""
    alone = _dist(views, 0, (BOX,), SpatialEngine(SpatialParams(workers=4)))
    second = _dist(views, 1, (BIN, BOX), SpatialEngine(SpatialParams(workers=1)))
    assert alone.value is not None and alone.value == second.value
    with pytest.raises(ValueError, match="workers"):
        SpatialEngine(SpatialParams(workers=0))


def test_object_summaries_are_reused_only_for_the_same_masks_and_window(views) -> None:
    """A second question on the same window answers as the first (from the cached summaries), and
    neither a region's object_id nor its index stands in for its masks or the depth: another object's
    masks under the same id, or noisy depth under the same stamps, give what a fresh engine gives (the
    reference: an engine with empty caches; the box and bin distances differ in the scene model)."""
    scene, frames, ids = views
    engine = SpatialEngine()
    pair = _request(views, "Which is closer to you, <object0> or <object1>?", objs=(BOX, BIN))
    cold = engine.answer(pair)
    warm = engine.answer(pair)
    assert (warm.text, warm.option_index) == (cold.text, cold.option_index)
    box = _dist(views, 0, (BOX,), engine)
    swapped = _request(views, "How far is <object0> from you?", objs=(BIN,))
    swapped.regions[0].object_id = 10 * BOX.object_id  # the box's id, the bin's masks
    assert engine.answer(swapped).value == _dist(views, 0, (BIN,)).value != box.value
    rng = np.random.default_rng(3)
    noisy = [dataclasses.replace(f, depth=degrade_depth(f.depth, 0.01, 0.05, rng)) for f in frames]
    got = _dist((scene, noisy, ids), 0, (BOX,), engine)
    assert got.value == _dist((scene, noisy, ids), 0, (BOX,)).value != box.value


def test_concurrent_questions_on_one_engine_answer_as_separate_engines_do(views) -> None:
    """answer() may run on several of the node's executor threads at once; each result is what a
    fresh engine gives for that question alone (the reference: sequential answers on fresh engines)."""
    from concurrent.futures import ThreadPoolExecutor

    questions = [
        ("How far is <object0> from you?", (BOX,)),
        ("How tall is <object0>?", (BIN,)),
        ("What is the distance between <object0> and <object1>?", (BOX, BIN)),
        ("How high above the ground is <object0>?", (BOX,)),
    ] * 2
    expected = [SpatialEngine().answer(_request(views, q, objs=o)).text for q, o in questions]
    shared = SpatialEngine()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda qo: shared.answer(_request(views, qo[0], objs=qo[1])).text, questions))
    assert got == expected


def _box_yaw_error(yaw: float, truth: float) -> float:
    """Heading difference of two box length axes: a box turned by π is itself."""
    return abs((yaw - truth + np.pi / 2) % np.pi - np.pi / 2)


def test_measured_boxes_are_the_scene_models_boxes(views) -> None:
    """Answer.boxes (what ~/markers draws) against the scene model: BOX is a 0.6 × 0.4 × 0.7 m box at
    (2.0, 0.6, 0.35) with its 0.6 m side at yaw 0.3 rad; BIN an upright cylinder r 0.2, h 0.5 at
    (1.6, -0.9, 0.25). Posed frames: the boxes are in the world frame of the poses (frame_id "")."""
    engine = SpatialEngine()
    req = _request(views, "How far is <object0> from <object1>?", objs=(BOX, BIN))
    req.regions[0].label = "box"
    ans = engine.answer(req)
    assert [b.object_id for b in ans.boxes] == [10, 20] and [b.label for b in ans.boxes] == ["box", ""]
    box, bin_ = ans.boxes
    assert box.frame_id == "" and bin_.frame_id == ""
    assert np.linalg.norm(np.subtract(box.center, BOX.center)) < 0.05
    assert box.size == pytest.approx((0.6, 0.4, 0.7), rel=0.1)
    assert _box_yaw_error(box.yaw, 0.3) < 0.05
    # The orientation is the yaw about world z: quaternion (0, 0, sin(yaw/2), cos(yaw/2)).
    assert box.orientation == pytest.approx((0.0, 0.0, np.sin(box.yaw / 2), np.cos(box.yaw / 2)), abs=1e-9)
    assert np.linalg.norm(np.subtract(bin_.center, BIN.center)) < 0.05
    assert bin_.size == pytest.approx((0.4, 0.4, 0.5), rel=0.1)


def test_without_poses_the_box_is_in_the_last_cameras_frame(views) -> None:
    """Unposed: the box comes in the last frame's camera frame; through that camera's true pose it must
    land on the scene model's box, its height axis on world z."""
    from rynnec_ros.core.transforms import quat_to_matrix

    scene, frames, ids = views
    optical = "camera_color_optical_frame"
    unposed = [dataclasses.replace(f, world_T_camera=None, frame_id=optical) for f in frames]
    ans = SpatialEngine().answer(_request((scene, unposed, ids), "How tall is <object0>?"))
    (box,) = ans.boxes
    assert box.frame_id == optical
    T = frames[-1].world_T_camera
    world_R_box = T[:3, :3] @ quat_to_matrix(*box.orientation)
    assert np.linalg.norm(T[:3, :3] @ np.asarray(box.center) + T[:3, 3] - BOX.center) < 0.08
    assert np.degrees(np.arccos(np.clip(world_R_box[2, 2], -1.0, 1.0))) < 3.0
    assert _box_yaw_error(float(np.arctan2(world_R_box[1, 0], world_R_box[0, 0])), 0.3) < 0.1
    assert box.size[2] == pytest.approx(0.7, rel=0.1)


def test_an_answer_that_measured_no_object_has_no_boxes(views) -> None:
    walked = SpatialEngine().answer(_request(views, "How far have you walked in total?", objs=()))
    assert walked.value is not None and walked.boxes == []


def test_every_geometric_answer_says_its_reading(views) -> None:
    """The reading spells out the task, every slot and the objects (subject first); sent back as the
    structured task it asks the same question (issue 24)."""
    engine = SpatialEngine()
    top = engine.answer(_request(views, "How high does <object0> reach?"))
    assert top.reading == "height_from_ground point=top unit=m objects=0"
    assert top.value == pytest.approx(0.7, abs=0.03)  # the scene model's box top, not its centre 0.35
    again = engine.answer(_request(views, "anything", task=top.reading))
    assert (again.reading, again.value) == (top.reading, top.value)
    # "relative to <object1>": the bin is the reference, the box (object0) the subject
    diff = engine.answer(
        _request(views, "Relative to <object1>, how much higher is <object0>?", objs=(BOX, BIN))
    )
    assert diff.reading == "height_difference point=center unit=m objects=0,1"
    swapped = engine.answer(
        _request(views, "Relative to <object0>, how much higher is <object1>?", objs=(BOX, BIN))
    )
    assert swapped.reading == "height_difference point=center unit=m objects=1,0"
    refused = engine.answer(_request(views, "How far is the top of <object0> from me?"))
    assert refused.value is None and refused.reading == "" and "does not use 'top'" in refused.reason


def test_a_claimed_quantity_is_measured_and_checked(views) -> None:
    """Hearsay stating a quantity ("X said OBJ is about 70 cm tall, right?") is answered with the measured
    quantity, in the claim's unit, and the text says whether the claim holds; the structured fields stay
    the measurement's. The box is 0.7 m tall in the scene model (BOX above)."""
    engine = SpatialEngine()
    right = engine.answer(
        _request(views, "A colleague told me <object0> is roughly 70 cm tall, is that correct?")
    )
    assert (right.task, right.unit) == ("object_height", "cm")
    assert right.reading == "object_height unit=cm objects=0"
    assert right.value == pytest.approx(70.0, rel=0.05)
    assert "The claimed 70 cm holds" in right.text and "read as object_height unit=cm objects=0" in right.text
    wrong = engine.answer(_request(views, "My brother says <object0> is 1 m tall. Is that right?"))
    assert (wrong.task, wrong.unit) == ("object_height", "m") and wrong.value == pytest.approx(0.7, rel=0.05)
    assert "The claimed 1 m does not hold" in wrong.text
    # A claim in one unit, the answer asked in another: 70 cm is 0.7 m and 3 ft is 0.9144 m (1 ft = 0.3048 m
    # exactly, by definition), 0.21 m from the box's 0.7 m, beyond 10 % of it.
    said = "Someone said <object0> is about 70 cm tall. True? Answer in metres."
    metres = engine.answer(_request(views, said))
    assert (metres.unit, metres.value) == ("m", pytest.approx(0.7, rel=0.05))
    assert "The claimed 70 cm holds" in metres.text
    told = "They told me <object0> is 3 feet tall, correct? Give it in metres."
    feet = engine.answer(_request(views, told))
    assert (feet.unit, feet.value) == ("m", pytest.approx(0.7, rel=0.05))
    assert "The claimed 3 ft does not hold" in feet.text

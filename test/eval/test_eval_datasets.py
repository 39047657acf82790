"""Loaders on the project's tiny datasets in the released formats, and their errors on bad input."""

import json
from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.eval.datasets import (
    decode_rle,
    load_embspatial,
    load_robobench,
    load_rynnec_bench,
    robobench_kind,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "eval"


def test_rynnec_bench_items() -> None:
    subsets = load_rynnec_bench(DATA / "rynnec_bench")
    assert [len(subsets[s]) for s in ("object_cognition", "object_segmentation", "spatial_cognition")] == [
        3,
        2,
        5,
    ]
    cog = subsets["object_cognition"]
    assert cog[0].question == "What is the color of [<REGION>]?"  # <video> dropped, <region> expanded
    assert cog[0].class_name == "cup" and cog[0].type == "color"
    assert cog[1].question == "How many cups like [<REGION><REGION>] are on the table?"
    assert cog[1].mask_frame_indices == [0, 2] and cog[1].class_name is None
    assert cog[2].type == "function"  # list types take their first entry, lower-cased
    tall = subsets["spatial_cognition"][3]
    assert tall.question == "Which is taller, [<REGION>] or [<REGION><REGION>]?"
    assert [m.object_index for m in tall.masks] == [0, 1, 1] and tall.mask_frame_indices == [0, 1, 2]
    seg = subsets["object_segmentation"][0]
    assert seg.type == "Direct Referring" and seg.question == "Please segment the red cup."
    frames = seg.load_frames()
    assert len(frames) == 3 and frames[0].shape == (24, 32, 3) and frames[0].dtype == np.uint8
    masks = seg.decode_masks()
    assert masks[0].shape == (24, 32) and masks[0].sum() == 64 and masks[0][4:12, 4:12].all()


def test_rle_formats() -> None:
    m = np.zeros((4, 5), bool)
    m[1:3, 2:4] = True
    # uncompressed COCO RLE: column-major run lengths starting with background
    counts = [9, 2, 2, 2, 5]
    assert (decode_rle({"size": [4, 5], "counts": counts}) == m).all()
    with pytest.raises(ValueError, match="COCO RLE"):
        decode_rle({"size": [4, 5]})
    with pytest.raises(ValueError, match="no 'size'"):
        decode_rle({"counts": counts})


def test_rynnec_bench_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no RynnEC-Bench file"):
        load_rynnec_bench(tmp_path)
    (tmp_path / "object_cognition.json").write_text(json.dumps([{"video_id": "v", "video": "clip.mp4"}]))
    with pytest.raises(ValueError, match="non-empty list of frame files"):
        load_rynnec_bench(tmp_path)
    (tmp_path / "object_cognition.json").write_text(json.dumps([{"video": ["a.png"]}]))
    with pytest.raises(ValueError, match="item 0: missing or malformed"):
        load_rynnec_bench(tmp_path)
    item = {
        "video_id": "v",
        "video": ["a.png"],
        "conversations": [{"from": "human", "value": "<region>?"}],
        "masks": [{"0": {"size": [2, 2], "counts": [4]}}],
        "mask_ids": [3],
    }
    (tmp_path / "object_cognition.json").write_text(json.dumps([item]))
    with pytest.raises(ValueError, match="mask_id 3 outside"):
        load_rynnec_bench(tmp_path)
    (tmp_path / "object_cognition.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_rynnec_bench(tmp_path)


def test_embspatial_items() -> None:
    items = load_embspatial(DATA / "embspatial")
    assert [i.key for i in items] == ["mp3d_0", "mp3d_1", "ai2thor_0", "scannet_0"]
    assert [i.source for i in items] == ["MP3D", "MP3D", "AI2-THOR", "ScanNet"]
    assert items[1].answer == 2 and items[1].relation == "left" and len(items[1].options) == 4
    frames = items[0].load_frames()  # base64 JPEG, as released
    assert len(frames) == 1 and frames[0].shape == (24, 32, 3)


def test_embspatial_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not found"):
        load_embspatial(tmp_path)
    bad = [{"question": "q", "answer_options": ["a", "b"], "answer": 5, "image": ""}]
    (tmp_path / "embspatial_bench.json").write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="answer index 5"):
        load_embspatial(tmp_path)


def test_robobench_items() -> None:
    items = load_robobench(DATA / "robobench")
    assert [i.kind for i in items] == ["mc", "mc", "q1", "q1", "q2", "q3"]
    assert (
        items[0].dimension == "2_perception_reasoning" and items[0].task == "object_centric/static_attribute"
    )
    assert items[0].image_paths[0].name == "q0.png" and items[0].image_paths[0].is_file()
    q1 = items[2]
    assert q1.task == "cross_embodiment/single_arm" and q1.dag == {"edges": [[1, 3], [2, 3], [3, 4]]}
    assert q1.image_paths[0].name == "frame_00.png" and q1.image_paths[0].is_file()
    assert items[3].dag == "1 -> 3, 2 -> 3, 3 -> 4" and items[4].dag is None


def test_robobench_released_format() -> None:
    """Released ``questions.json`` fields and prompt building (``data/dataset.py`` of yulin-luo/RoboBench:
    system prompt + "You are a <robot> robot." + question; MC: prompt + question + "A. …" lines +
    ``MCQ_post_prompt``; images under ``<task>/images/<sample>/``)."""
    items = load_robobench(DATA.parent / "eval_robobench")
    by = {i.key.split("/images/")[1]: i for i in items}
    assert by["ex_a_Q1"].kind == "q1" and by["standard_Q2"].kind == "q2" and by["ex_c_Q3"].kind == "q3"
    assert by["is_sealed/is_sealed_0000"].kind == "mc"
    skills = "[Q1 skills: move_to grasp pick_up place pull push pour scoop unfold no_ops]\n"
    assert by["ex_b_Q1"].prompt == skills + "You are a dual-arm robot.Example B: unfold the towel."
    assert by["standard_Q2"].prompt.startswith("[Q2 skills]\nYou are a single-arm robot.Next:")
    assert by["is_sealed/is_sealed_0001"].prompt == (
        "[is it sealed?]\nIs the box sealed?\nA. No\nB. Yes\n[answer with the letter]"
    )
    img = by["is_sealed/is_sealed_0001"].image_paths[0]
    assert img.parts[-4:] == ("images", "is_sealed", "is_sealed_0001", "frame_00.png") and img.is_file()
    assert by["standard_Q1"].dag == "1 -> 2, 2 -> 3, 3 -> 4, 4 -> 5" and by["ex_a_Q1"].dag is None
    assert all(i.system_prompt for i in items)
    old = load_robobench(DATA / "robobench")  # no system_prompt.json: the question alone
    assert old[0].prompt == old[0].question and not old[0].system_prompt


def test_robobench_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no RoboBench questions\.json"):
        load_robobench(tmp_path)
    (tmp_path / "dim" / "task").mkdir(parents=True)
    (tmp_path / "dim" / "task" / "questions.json").write_text(json.dumps([{"id": "x"}]))
    with pytest.raises(ValueError, match="item 0: missing or malformed"):
        load_robobench(tmp_path)
    (tmp_path / "dim" / "task" / "questions.json").write_text(
        json.dumps([{"id": "x_Q1", "question": "q", "gt_answer": "1-grasp(a)"}])
    )
    (tmp_path / "system_prompt.json").write_text(json.dumps({"skill_list_Q2": "S"}))
    with pytest.raises(ValueError, match="has no prompt 'skill_list_Q1'"):
        load_robobench(tmp_path)


@pytest.mark.parametrize(
    ("rid", "gt", "dimension", "kind"),
    [
        # released PlanningEvaluator._classify_records: "_Q1/_Q2/_Q3" in the id, else yes/no/equal/
        # left/right → Q3, no leading "N-"/"N."/"N)" and one line → Q2, else Q1
        ("3_generalized_planning/x/images/e_Q2", "1-grasp(a), 2-place(a, b)", "3_generalized_planning", "q2"),
        ("1_instruction_comprehension/x/images/e", "Equal", "1_instruction_comprehension", "q3"),
        ("1_instruction_comprehension/x/images/e", "grasp(a)", "1_instruction_comprehension", "q2"),
        ("1_instruction_comprehension/x/images/e", "1-grasp(a)", "1_instruction_comprehension", "q1"),
        (
            "1_instruction_comprehension/x/images/e",
            "grasp(a)\nplace(a, b)",
            "1_instruction_comprehension",
            "q1",
        ),
        # the other dimensions are multiple choice (multi_choice evaluator)
        ("2_perception_reasoning/x/images/e", "yes", "2_perception_reasoning", "mc"),
    ],
)
def test_robobench_kind(rid: str, gt: str, dimension: str, kind: str) -> None:
    assert robobench_kind(rid, gt, dimension) == kind

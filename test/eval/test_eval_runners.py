"""Runners and reports on the tiny datasets with scripted answers, against hand-computed tables.

The scripted predictor is a test double for the model only: it returns fixed answers per question so
the scoring, aggregation, resume and report code can be checked against numbers worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.core.types import Answer, Request
from rynnec_ros.eval.datasets import load_embspatial, load_robobench, load_rynnec_bench
from rynnec_ros.eval.judges import OfflineJudge
from rynnec_ros.eval.report import embspatial_summary, robobench_summary, rynnec_summary, write_report
from rynnec_ros.eval.runners import ResultsFile, run_embspatial, run_robobench, run_rynnec_bench

DATA = Path(__file__).resolve().parents[1] / "data" / "eval"


def _rect(r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
    m = np.zeros((24, 32), bool)
    m[r0:r1, c0:c1] = True
    return m


class Scripted:
    """Answers keyed by a substring of the question; records every call."""

    def __init__(self, answers: dict[str, object], scores: dict[str, list[float]] | None = None) -> None:
        self.answers = answers
        self.scores = scores or {}
        self.calls: list[tuple[str, dict]] = []

    def _lookup(self, table: dict, question: str) -> object:
        hits = [v for k, v in table.items() if k in question]
        assert len(hits) == 1, f"no unique scripted answer for {question!r}"
        return hits[0]

    def answer(self, request: Request, **kw: object) -> Answer:
        self.calls.append((request.question, {"max_new_tokens": request.max_new_tokens,
                                              "regions": request.regions}))
        assert all(f.rgb.dtype == np.uint8 and f.rgb.ndim == 3 for f in request.frames)
        return Answer(text=str(self._lookup(self.answers, request.question)))

    def segment(self, request: Request, **kw: object) -> Answer:
        self.calls.append((request.question, {}))
        masks = self._lookup(self.answers, request.question)
        return Answer(text="Sure, it is [SEG].", masks=list(masks))  # type: ignore[call-overload]

    def score_options(self, request: Request, **kw: object) -> list[float]:
        self.calls.append((request.question, {"options": request.options}))
        return list(self._lookup(self.scores, request.question))  # type: ignore[call-overload]


class Refuses:
    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the model was called ({name}) although every item was already scored")


RYNNEC_ANSWERS: dict[str, object] = {
    "color of": "The cup is red.",  # exact → 5/5
    "How many cups": "There are three.",  # same number → 1
    "function of": "",  # empty → 0
    "segment the red cup": [None, None, _rect(4, 12, 4, 12)],  # J = 64/128, F = (0 + 1)/2
    "holds the books": [None, _rect(14, 20, 20, 28), None],  # exact → J = F = 1
    "degrees did the camera": "about 60 degrees",  # RoA 1 − 30/90
    "How far": "150 cm",  # MRA 0.5
    "After turning": "1 o'clock",  # 11 → 1 o'clock = 60° → RoA 1/3
    "Which is taller": "<object1> is taller",  # exact → 1
    "How high": "no idea",  # no number → 0
}


def test_rynnec_bench_hand_computed(tmp_path: Path) -> None:
    model = Scripted(RYNNEC_ANSWERS)
    results = ResultsFile(tmp_path / "results.jsonl")
    records = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        model,
        OfflineJudge(use_embeddings=False),
        results,
        protocol="paper",
        progress=False,
    )
    assert len(records) == 10
    by = {r["key"]: r for r in records}
    assert by["object_segmentation/0"]["j"] == pytest.approx(0.5)
    assert by["object_segmentation/0"]["f"] == pytest.approx(0.5)
    assert by["spatial_cognition/0"]["score"] == pytest.approx(2 / 3)
    assert by["spatial_cognition/2"]["score"] == pytest.approx(1 / 3)
    assert by["spatial_cognition/4"]["detail"] == "no number in the prediction"
    tall_kw = next(kw for q, kw in model.calls if "taller" in q)
    # masks on frames 0, 1, 2 of objects 0, 1, 1 (the item's order), grouped per object
    assert [(r.object_id, sorted(r.masks)) for r in tall_kw["regions"]] == [(0, [0]), (1, [1, 2])]
    h = rynnec_summary(records, "scripted").headline
    expected = {
        "Object Properties": 200 / 3,
        "Seg. DR": 50.0,
        "Seg. SR": 100.0,
        "Object Mean": 70.0,
        "Ego His.": 100 * (2 / 3 + 1 / 2) / 2,
        "Ego Pres.": None,
        "Ego Fut.": 100 / 3,
        "World Size": 50.0,
        "World Dis.": None,
        "World PR": None,
        "Spatial Mean": 50.0,
        "Overall Mean": 60.0,
    }
    for k, v in expected.items():
        assert h[k] == (None if v is None else pytest.approx(v)), k

    # resume: a second run finds every item scored and never touches the model
    again = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        Refuses(),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "results.jsonl"),
        protocol="paper",
        progress=False,
    )
    assert again == records
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 10


def test_rynnec_bench_upstream_protocol_and_limit(tmp_path: Path) -> None:
    records = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        Scripted(RYNNEC_ANSWERS),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        protocol="upstream",
        progress=False,
    )
    # released numerical_score by hand: "about 60 degrees" vs 90 degrees → 30/90 passes 4 thresholds
    # (0.4); "150 cm" has no unit the released reader lists → 0; 1 vs 11 o'clock → 0; "no idea" → 0;
    # the binary "taller" item → 1
    h = rynnec_summary(records, "m").headline
    assert h["Spatial Mean"] == pytest.approx(100 * (0.4 + 0 + 0 + 1 + 0) / 5)
    assert h["Overall Mean"] == pytest.approx(100 * (3.5 + 1.4) / 10)
    assert {r["protocol"] for r in records if r.get("score_kind") == "numerical"} == {"upstream"}
    # the same results re-reported under the paper protocol are re-scored from the stored
    # predictions, without the model: "150 cm" vs 2 m → MRA 0.5, 60° vs 90° → 2/3, 1 vs 11 o'clock → 1/3
    paper = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        Refuses(),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        protocol="paper",
        progress=False,
    )
    hp = rynnec_summary(paper, "m").headline
    assert hp["Spatial Mean"] == pytest.approx(100 * (2 / 3 + 0.5 + 1 / 3 + 1 + 0) / 5)
    assert {r["protocol"] for r in paper if r.get("score_kind") != "J&F"} == {"paper"}
    judged = [(r["key"], r["detail"]) for r in records if r.get("score_kind") in ("binary", "graded")]
    assert [(r["key"], r["detail"]) for r in paper if r.get("score_kind") in ("binary", "graded")] == judged
    limited = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        Scripted(RYNNEC_ANSWERS),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "l.jsonl"),
        limit=1,
        progress=False,
    )
    assert [r["key"] for r in limited] == [
        "object_cognition/0",
        "object_segmentation/0",
        "spatial_cognition/0",
    ]


def test_resume_after_interrupted_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text('{"key": "a", "score": 1}\n{"key": "b", "sc')
    rf = ResultsFile(path)
    assert set(rf.records) == {"a"}
    rf.add({"key": "b", "score": 0})
    assert set(ResultsFile(path).records) == {"a", "b"}
    path.write_text('{"key": "a"\n{"key": "b"}\n')
    with pytest.raises(ValueError, match=":1 is not valid JSON"):
        ResultsFile(path)


def test_embspatial_hand_computed(tmp_path: Path) -> None:
    answers = {"above the table": "A", "left of the tv": "B", "closest": "(B) the mug", "farthest": "nothing"}
    scores = {
        "above the table": [-1, -2, -3, -4],
        "left of the tv": [-5, -1, -2, -3],
        "closest": [-3, -1, -2, -4],
        "farthest": [-4, -3, -2, -1],
    }
    model = Scripted(answers, scores)
    records = run_embspatial(
        load_embspatial(DATA / "embspatial"), model, ResultsFile(tmp_path / "r.jsonl"), progress=False
    )
    gen_prompt = model.calls[0][0]
    assert gen_prompt.endswith(
        "A. clock\nB. chair\nC. bed\nD. rug\nAnswer with the option's letter from the given choices directly."
    )
    s = embspatial_summary(records, "scripted", ["generation", "likelihood"])
    assert s.headline == {"generation": 50.0, "likelihood": 75.0}
    env = next(x for x in s.sections if "environment" in x.heading)
    assert env.headers == ["Strategy", "MP3D", "AI2-THOR", "ScanNet", "All"]
    assert env.rows == [
        ["generation", "50.0", "100.0", "0.0", "50.0"],
        ["likelihood", "50.0", "100.0", "100.0", "75.0"],
    ]
    # generation-only records are completed with likelihood on a later run instead of being skipped
    partial = run_embspatial(
        load_embspatial(DATA / "embspatial"),
        Scripted(answers, scores),
        ResultsFile(tmp_path / "p.jsonl"),
        ["generation"],
        progress=False,
    )
    assert all("likelihood" not in r for r in partial)
    full = run_embspatial(
        load_embspatial(DATA / "embspatial"),
        Scripted(answers, scores),
        ResultsFile(tmp_path / "p.jsonl"),
        progress=False,
    )
    assert [r["likelihood"] for r in full] == [1.0, 0.0, 1.0, 1.0]


def test_robobench_hand_computed(tmp_path: Path) -> None:
    answers = {
        "What colour is the block": "A",
        "Which objects are graspable": "B",
        "Put the apple in the drawer": "pick_up(apple), open(drawer), place(apple, drawer), close(drawer)",
        "Store the apple": "1. pick_up(apple)\n2. place(apple, drawer)\n3. close(drawer)",
        "What is the next step": "place(red_apple, drawer)",
        "Is the drawer open": "Yes, it is.",
    }
    records = run_robobench(
        load_robobench(DATA / "robobench"),
        Scripted(answers),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        progress=False,
    )
    # MC: "A" = A; "B" ≠ {B, C}. Q1 (released rules, S* = {apple in drawer, drawer closed}): the
    # reordered plan is allowed by the DAG → 10 + 10; the plan without open(drawer) matches 3/4 nodes
    # (floor 7) and its place into the closed drawer fails → (7 + 0)/20·100 = 35. Q2: skill 1, object
    # ½ (red_apple vs apple), parameter 1 → 250/3. Q3: "yes" = "yes".
    scores = [r["score"] for r in records]
    assert scores == pytest.approx([100.0, 0.0, 100.0, 35.0, 250 / 3, 100.0])
    assert records[3]["initial_state_source"] == "reference preconditions"
    s = robobench_summary(records, "scripted")
    assert s.headline["2_perception_reasoning/mc"] == pytest.approx(50.0)
    assert s.headline["3_generalized_planning/q1"] == pytest.approx(67.5)
    assert s.radar["3_generalized_planning"] == pytest.approx((67.5 + 250 / 3 + 100) / 3)
    comp = next(x for x in s.sections if "Q1 components" in x.heading)
    assert comp.rows == [["cross_embodiment/single_arm", 2, "8.50", "5.00", "67.5"]]


ROBOBENCH_JUDGE = Path(__file__).resolve().parents[1] / "data" / "eval_robobench"
# The model plans of the released Q1 judge prompt's examples A–G (PROMPT_V3), plus the standard
# grasp/pick_up sequence, a lift-only reference, Q2/Q3 and multiple-choice answers.
ROBOBENCH_JUDGE_ANSWERS = {
    "Example A": "1-move_to(none,apple), 2-grasp(apple), 3-place(apple, bowl)",
    "Example B": "1-left:move_to(none,L), right:move_to(none,R), 2-left:grasp(L), right:grasp(R), "
    "3-left:unfold(L,t), right:unfold(R,t)",
    "Example C": "1-grasp(drawer), 2-push(drawer, inward)",
    "Example D": "1-grasp(8), 2-pick_up(8), 3-place(8, target)",
    "Example E": "1-grasp(jar), 2-pick_up(jar), 3-pour(jar, sauce, bowl)",
    "Example F": "1-left:move_to(none, book), right:no_ops",
    "Example G": "1-left:no_ops, right:grasp(lid), 2-left:no_ops, right:pull(lid, up)",
    "Standard:": "1-move_to(none, apple), 2-grasp(apple), 3-pick_up(apple), 4-move_to(apple, bowl), "
    "5-place(apple, bowl)",
    "Lift:": "grasp(cup)",
    "Impossible:": "pick_up(cup)",
    "Next:": "move_to(apple, bowl)",
    "State:": "Yes, it is in the bowl.",
    "Side:": "Left.",
    "Is the jar sealed": "(B) Yes",
    "Is the box sealed": "b",
    "Is the bag sealed": "I considered B, but the final answer is A.",
    "Is the cap sealed": "It might be sealed, hard to say.",
}


def test_robobench_released_examples_run_to_completion(tmp_path: Path) -> None:
    model = Scripted(ROBOBENCH_JUDGE_ANSWERS)
    records = run_robobench(
        load_robobench(ROBOBENCH_JUDGE),
        model,
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        progress=False,
    )
    by = {r["key"].split("/images/")[1]: r for r in records}
    # Q1 = (Node + Completion)/20·100 with the Node/Completion values PROMPT_V3 states for A–E, its
    # rules for F (Node floor(2/4·10) = 5) and G (floor(4/6·10) = 6), the standard sequence predicted
    # exactly (10 + 10) and the lift-only reference (S* empty → 10; Node floor(1/2·10) = 5).
    expected_q1 = {
        "ex_a_Q1": 85.0,
        "ex_b_Q1": 85.0,
        "ex_c_Q1": 25.0,
        "ex_d_Q1": 0.0,
        "ex_e_Q1": 50.0,
        "ex_f_Q1": 75.0,
        "ex_g_Q1": 80.0,
        "standard_Q1": 100.0,
        "lift_Q1": 75.0,
    }
    assert {k: by[k]["score"] for k in expected_q1} == expected_q1
    # one gripper cannot pick up a second object: the reference cannot run, the item is reported
    assert by["two_hands_Q1"]["score"] is None and "cannot run" in by["two_hands_Q1"]["error"]
    assert by["standard_Q2"]["score"] == 100.0  # "4-move_to(apple, bowl)".split("-")[-1]
    assert by["standard_Q3"]["score"] == 100.0 and by["ex_c_Q3"]["score"] == 100.0  # "left" == "left"
    # MC: "(B) Yes" is not a bare letter → normalised to B (correct); "b" → B ≠ A; the announced A
    mc = [by[f"is_sealed/is_sealed_000{i}"] for i in range(4)]
    assert [r["score"] for r in mc] == [100.0, 0.0, 100.0, 0.0]
    assert [r["chosen_by"] for r in mc] == ["offline(token-f1)", "letter rule", *["offline(token-f1)"] * 2]
    assert mc[3]["unreadable"] and "unreadable" not in mc[0]  # no letter anywhere: wrong, not dropped
    # the benchmark's system prompts travel with every question
    prompts = [q for q, _ in model.calls]
    skills = "[Q1 skills: move_to grasp pick_up place pull push pour scoop unfold no_ops]\n"
    assert skills + "You are a single-arm robot.Example A: put the apple in the bowl." in prompts
    assert skills + "You are a single-arm robot.Example E: serve the sauce into the bowl." in prompts  # human
    assert "[is it sealed?]\nIs the jar sealed?\nA. No\nB. Yes\n[answer with the letter]" in prompts
    s = robobench_summary(records, "scripted")
    released = next(x for x in s.sections if "released planning aggregation" in x.heading)
    # Q1 mean over the 9 scored of 10 items: 575/9 = 63.89; overall weights by counts that include
    # the unscored item: (63.89·10 + 100·1 + 100·2)/13 = 72.22
    assert released.rows == [
        ["Q1", 10, 9, "63.89"],
        ["Q2", 1, 1, "100.00"],
        ["Q3", 2, 2, "100.00"],
        ["overall", 13, "", "72.22"],
    ]
    main = next(x for x in s.sections if x.heading.startswith("3_generalized_planning —"))
    # per task: dual-arm (85+75+80)/3 = 80, single-arm (85+25+0+50+100+75)/6 = 55.83; Avg 67.92
    assert main.rows[0] == ["Q1 long-horizon plan", "80.0", "55.8", "67.9", 1]
    path = write_report(tmp_path / "out", "RoboBench", {"model": "scripted"}, s)
    assert "released planning aggregation" in path.read_text()


def test_report_files(tmp_path: Path) -> None:
    records = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        Scripted(RYNNEC_ANSWERS),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        progress=False,
    )
    path = write_report(
        tmp_path / "out",
        "RynnEC-Bench",
        {"model": "scripted"},
        rynnec_summary(records, "scripted"),
        "offline judge",
    )
    text = path.read_text()
    assert text.startswith("# RynnEC-Bench\n\n> **APPROXIMATE SCORES**: offline judge")
    assert "| scripted | 49.0 | 66.7 | 50.0 | 100.0 | 70.0 | 20.0 | — | 0.0 | 50.0 | — | — | 28.0 |" in text
    assert "Numerical items scored with the upstream (the released numerical_score) protocol." in text
    for png in ("tasks.png", "radar.png"):
        data = (tmp_path / "out" / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 1000


class FailsToSegment(Scripted):
    def segment(self, request: Request, **kw: object) -> Answer:
        raise ValueError("no [SEG] token in the answer")


def test_missing_segmentation(tmp_path: Path) -> None:
    """Failed segmentation is left out of the Seg. columns (the released eval_seg.py drops an item whose
    inference raises) and counts 0 in Object Mean (paper Table 2: GPT-4o, without segmentation, has
    41.1 for properties and 33.9 Object Mean, i.e. the segmentation share counted as 0)."""
    records = run_rynnec_bench(
        load_rynnec_bench(DATA / "rynnec_bench"),
        FailsToSegment(RYNNEC_ANSWERS),
        OfflineJudge(use_embeddings=False),
        ResultsFile(tmp_path / "r.jsonl"),
        progress=False,
    )
    seg = [r for r in records if r["subset"] == "object_segmentation"]
    assert [r["score"] for r in seg] == [None, None] and "no [SEG]" in seg[0]["error"]
    h = rynnec_summary(records, "m").headline
    # properties 1 + 1 + 0 over 3 items plus 2 segmentation items at 0 → 2/5
    assert (h["Seg. DR"], h["Seg. SR"]) == (None, None)
    assert h["Object Mean"] == pytest.approx(40.0)
    # overall: (2 + 0 + spatial 1.4) / 10 items (upstream protocol, as in the test above)
    assert h["Overall Mean"] == pytest.approx(34.0)
    # no segmentation items at all: Object and Overall Mean cannot be formed
    only = rynnec_summary([r for r in records if r["subset"] != "object_segmentation"], "m")
    assert only.headline["Object Mean"] is None and only.headline["Overall Mean"] is None
    assert only.headline["Spatial Mean"] == pytest.approx(28.0)

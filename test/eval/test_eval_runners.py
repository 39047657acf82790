"""Runners and reports on the tiny datasets with scripted answers, against hand-computed tables.

The scripted predictor is a test double for the model only: it returns fixed answers per question so
the scoring, aggregation, resume and report code can be checked against numbers worked out by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from rynnec_ros.eval.datasets import load_embspatial, load_robobench, load_rynnec_bench
from rynnec_ros.eval.judges import OfflineJudge
from rynnec_ros.eval.report import embspatial_summary, robobench_summary, rynnec_summary, write_report
from rynnec_ros.eval.runners import ResultsFile, run_embspatial, run_robobench, run_rynnec_bench
from rynnec_ros.types import Answer

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

    def answer(self, frames: Sequence[np.ndarray], question: str, **kw: object) -> Answer:
        self.calls.append((question, kw))
        assert all(f.dtype == np.uint8 and f.ndim == 3 for f in frames)
        return Answer(text=str(self._lookup(self.answers, question)))

    def segment(self, frames: Sequence[np.ndarray], expression: str, **kw: object) -> Answer:
        self.calls.append((expression, kw))
        masks = self._lookup(self.answers, expression)
        return Answer(text="Sure, it is [SEG].", masks=list(masks))  # type: ignore[call-overload]

    def score_options(
        self, frames: Sequence[np.ndarray], question: str, options: Sequence[str]
    ) -> list[float]:
        self.calls.append((question, {"options": options}))
        return list(self._lookup(self.scores, question))  # type: ignore[call-overload]


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
    assert tall_kw["mask_frame_indices"] == [0, 1, 2] and tall_kw["mask_object_ids"] == [0, 1, 1]
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
    h = rynnec_summary(records, "m").headline
    assert h["Spatial Mean"] == pytest.approx(100 * (0.4 + 0.5 + 0 + 1 + 0) / 5)
    assert h["Overall Mean"] == pytest.approx(100 * (3.5 + 1.9) / 10)
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
    scores = [r["score"] for r in records]
    assert scores == pytest.approx([100.0, 0.0, 100.0, 50.0, 250 / 3, 100.0])
    assert records[3]["initial_state_source"] == "reference preconditions"
    s = robobench_summary(records, "scripted")
    assert s.headline["2_perception_reasoning/mc"] == pytest.approx(50.0)
    assert s.headline["3_generalized_planning/q1"] == pytest.approx(75.0)
    assert s.radar["3_generalized_planning"] == pytest.approx((75.0 + 250 / 3 + 100) / 3)
    comp = next(x for x in s.sections if "Q1 components" in x.heading)
    assert comp.rows == [["cross_embodiment/single_arm", 2, "87.5", "62.5", "75.0"]]


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
    assert "| scripted | 60.0 | 66.7 | 50.0 | 100.0 | 70.0 | 58.3 | — | 33.3 | 50.0 | — | — | 50.0 |" in text
    for png in ("tasks.png", "radar.png"):
        data = (tmp_path / "out" / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 1000

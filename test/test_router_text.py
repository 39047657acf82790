"""Router decisions and the request-text sanitiser (ROS-free).

The router is tested with doubles for the engine and the geometry (it is the unit: which one is asked
and what comes back); the expected routing is the ``spatial_source`` contract in docs/ros.md. The
sanitiser's refused ranges are Unicode's C0, DEL and C1 control blocks (Unicode 15, chapter 23.1).
"""

from __future__ import annotations

import numpy as np
import pytest

from rynnec_ros.core.text import check_text
from rynnec_ros.core.types import Answer, Cancelled, Frame, Region, Request
from rynnec_ros.router import Router
from rynnec_ros.spatial.plan import Parsed, SpatialPlan, Unanswerable


class Engine:
    backend = "double"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def answer(self, request: Request, on_token=None, should_stop=lambda: False, **_: object) -> Answer:
        self.asked.append(request.question)
        return Answer(text="model says", source="?")

    def score_options(self, request: Request, should_stop=lambda: False, **_: object) -> list[float]:
        self.asked.append(request.question)
        return [-2.0, -1.0, -1.0 - np.log(3.0)][: len(request.options or [])]

    def resolve_prompts(self, request: Request) -> Request:
        return request  # these requests carry no prompts


class Geometry:
    """Reads questions with 'how far' as the task ``distance``; the data cover it when the frame has depth."""

    def plan(self, request: Request) -> SpatialPlan | Unanswerable:
        if "how far" not in request.question:
            return Unanswerable(f"not a spatial question I can measure: no task in {request.question!r}")
        plan = SpatialPlan(Parsed("distance"), [], "distance")
        return plan if request.frames[0].depth is not None else Unanswerable("no depth on the frames", plan)

    def solve(self, request: Request, plan: SpatialPlan) -> Answer:
        return Answer(text="1.2 m", value=1.2, unit="m", source="geometry", task=plan.task)


def _request(question: str, depth: bool) -> Request:
    frame = Frame(rgb=np.zeros((4, 4, 3), np.uint8), depth=np.ones((4, 4), np.float32) if depth else None)
    return Request(question, [frame])


@pytest.mark.parametrize(
    ("source", "question", "depth", "expect"),
    [
        ("auto", "how far is it?", True, "geometry"),
        ("auto", "how far is it?", False, "model"),  # geometry cannot: the model answers
        ("auto", "what colour is it?", True, "model"),
        ("model", "how far is it?", True, "model"),
        ("geometry", "how far is it?", True, "geometry"),
    ],
)
def test_routing_follows_spatial_source(source: str, question: str, depth: bool, expect: str) -> None:
    engine = Engine()
    ans = Router(engine, Geometry(), source).answer(_request(question, depth))
    assert ans.source == expect
    assert engine.asked == ([question] if expect == "model" else [])


def test_geometry_only_mode_fails_with_the_reason_never_with_a_made_up_number() -> None:
    router = Router(Engine(), Geometry(), "geometry")
    with pytest.raises(ValueError, match="cannot answer this distance question: no depth on the frames"):
        router.answer(_request("how far is it?", depth=False))
    with pytest.raises(ValueError, match="not a spatial question I can measure"):
        router.answer(_request("what colour is it?", depth=True))
    with pytest.raises(ValueError, match="geometry module is unavailable"):
        Router(Engine(), None, "geometry").answer(_request("how far is it?", depth=True))
    with pytest.raises(ValueError, match="spatial_source must be one of"):
        Router(Engine(), None, "sometimes")


def test_auto_says_why_a_spatial_question_went_to_the_model() -> None:
    """docs/ros.md: under ``auto`` a spatial question the geometry cannot measure is answered by the model,
    and the answer's ``reason`` says so, so a planner can tell a guess from a measurement."""
    router = Router(Engine(), Geometry(), "auto")
    fallback = router.answer(_request("how far is it?", depth=False))
    assert (fallback.source, fallback.task) == ("model", "distance")
    assert fallback.reason == "answered by the model: geometry cannot answer this distance question: " \
        "no depth on the frames"
    assert router.answer(_request("what colour is it?", depth=True)).reason == ""  # not spatial: no fallback


def test_options_are_chosen_by_likelihood_with_probabilities() -> None:
    """Summed log-likelihoods -2, -1, -1 - ln 3 (the double's) are, by hand, softmax e^-2 : e^-1 : e^-1 / 3
    = 0.2162 : 0.5878 : 0.1959 (e^-2 = 0.135335, e^-1 = 0.367879; denominator 0.625840). The text is the
    chosen option, so the index and the text agree; streaming gets that text; a quantity in it is parsed."""
    pieces: list[str] = []
    request = Request("which one?", [Frame(rgb=np.zeros((4, 4, 3), np.uint8))],
                      options=["0.5 m", "2 metres", "the red one"])
    ans = Router(Engine(), Geometry(), "auto").answer(request, on_token=pieces.append)
    assert ans.option_probabilities == pytest.approx([0.2162, 0.5878, 0.1959], abs=1e-4)
    assert (ans.option_index, ans.text, pieces, ans.source) == (1, "2 metres", ["2 metres"], "model")
    assert (ans.value, ans.unit) == (2.0, "m")
    free = Router(Engine(), Geometry(), "auto").answer(_request("what colour is it?", depth=True))
    assert free.option_probabilities == [] and free.option_index is None


def test_a_stopped_request_never_reaches_the_engine() -> None:
    engine = Engine()
    with pytest.raises(Cancelled):
        Router(engine, None, "auto").answer(_request("what?", depth=False), should_stop=lambda: True)
    assert engine.asked == []


@pytest.mark.parametrize("bad", ["\x07", "\x1b[2J", "\x7f", "\x80", "\x9b31m", "\x9f"])
def test_c0_del_and_c1_controls_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=f"control characters \\(U\\+{ord(bad[0]):04X}"):
        check_text(f"where is the cup{bad}?", "question", 100)


def test_text_limits_and_allowed_whitespace() -> None:
    assert check_text("  line one\n\tline two  ", "question", 100) == "line one\n\tline two"
    assert check_text("   ", "task", 100, optional=True) == ""
    assert check_text("żółw ¿dónde? 杯子", "question", 100) == "żółw ¿dónde? 杯子"  # U+00A0.. is text
    with pytest.raises(ValueError, match="question is empty"):
        check_text(" ", "question", 100)
    with pytest.raises(ValueError, match="more than max_question_chars=3"):
        check_text("abcd", "question", 3, limit_name="max_question_chars")


def test_a_partly_read_question_is_never_measured() -> None:
    """A question the rules read as a task but with a cue that reading does not use (here a top, where
    the distance is to the centre) goes to the model under auto, saying why, and fails under geometry."""
    from rynnec_ros.spatial import SpatialEngine

    question = "How far is the top of <object0> from me?"
    request = Request(question, [Frame(rgb=np.zeros((4, 4, 3), np.uint8), depth=np.ones((4, 4), np.float32))],
                      regions=[Region(7, {0: np.ones((4, 4), bool)})])
    engine = Engine()
    ans = Router(engine, SpatialEngine(), "auto").answer(request)
    assert (ans.source, ans.task, engine.asked) == ("model", None, [question])
    assert ans.reason.startswith("answered by the model: not fully understood") and "'top'" in ans.reason
    with pytest.raises(ValueError, match="does not use 'top'"):
        Router(Engine(), SpatialEngine(), "geometry").answer(request)


def test_a_spatial_request_is_read_once_and_left_as_it_came(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 21: one free-text question answered by geometry costs one parse, one object resolution and
    one coverage check (before: 1 free-text and 3 structured parses, 6 resolutions, 2 coverage checks),
    and the router no longer writes the canonical task back into ``request.task``. Counted on the real
    engine; the answer (a 8×8-pixel patch 1.5 m ahead of a wall at 3 m, K with f = 32 on a 32×32 frame,
    the patch centred on the optical axis) is 1.5 m by hand."""
    from rynnec_ros.spatial import engine as spatial_engine
    from rynnec_ros.spatial import plan as spatial_plan

    calls: dict[str, int] = {}

    def counted(module: object, name: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: object, **kwargs: object) -> object:
            calls[name] = calls.get(name, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("parse_question", "parse_structured", "resolve_objects"):
        counted(spatial_engine, name)
    counted(spatial_engine.SpatialEngine, "_check_coverage")
    counted(spatial_plan, "unread_cue")
    K = np.array([[32.0, 0, 16], [0, 32.0, 16], [0, 0, 1]])
    depth = np.full((32, 32), 3.0, np.float32)
    mask = np.zeros((32, 32), bool)
    mask[12:20, 12:20] = True
    depth[mask] = 1.5
    frame = Frame(rgb=np.zeros((32, 32, 3), np.uint8), depth=depth, K=K)
    request = Request("How far is <object0> from me?", [frame], regions=[Region(7, {0: mask})])
    ans = Router(Engine(), spatial_engine.SpatialEngine(), "auto").answer(request)
    assert (ans.source, ans.task, ans.reading) == ("geometry", "distance_to_camera",
                                                   "distance_to_camera unit=m objects=0")
    assert ans.value == pytest.approx(1.5, rel=0.01), ans.reason
    # exact depth: only the image's resolution, one pixel (1.5 m / 32) and the 3-pixel edge band, each
    # uniform: a face's σ = (1.5 / 32)·√((3² + 1) / 12); the centre's, and so the distance's, σ/√2
    face = 1.5 / 32 * np.sqrt(10 / 12)
    assert (ans.uncertainty, ans.uncertainty_unit) == (pytest.approx(face / np.sqrt(2)), "m")
    assert calls == {"parse_question": 1, "resolve_objects": 1, "_check_coverage": 1, "unread_cue": 1}
    assert request.task is None


def _patch_request(question: str, task: str | None = None) -> Request:
    """The scene above: an 8×8-pixel patch 1.5 m ahead of a wall at 3 m (f = 32 px, 32×32 frame)."""
    K = np.array([[32.0, 0, 16], [0, 32.0, 16], [0, 0, 1]])
    depth = np.full((32, 32), 3.0, np.float32)
    mask = np.zeros((32, 32), bool)
    mask[12:20, 12:20] = True
    depth[mask] = 1.5
    return Request(question, [Frame(rgb=np.zeros((32, 32, 3), np.uint8), depth=depth, K=K)],
                   regions=[Region(7, {0: mask})], task=task)


class Reader(Engine):
    """Scores the candidate readings: ``favourite`` gets log-likelihood 0, every other -10 per character."""

    def __init__(self, favourite: str) -> None:
        super().__init__()
        self.favourite = favourite
        self.options: list[str] = []

    def score_options(self, request: Request, should_stop=lambda: False, **_: object) -> list[float]:
        self.asked.append(request.question)
        self.options = list(request.options or [])
        return [0.0 if o.strip() == self.favourite else -10.0 * len(o) for o in self.options]


def test_the_second_reader_confirms_or_refuses_the_rules_reading() -> None:
    """Issue 24, item 3 (plumbing; the double stands in for the model's likelihoods): the rules' reading
    is measured when the model scores it best; a different best reading sends the question to the model
    under auto, naming both readings, and fails under geometry. A structured task is not re-read."""
    from rynnec_ros.spatial import SpatialEngine

    rules = "distance_to_camera unit=m objects=0"
    agree = Reader(rules)
    question = "How far is <object0>?"
    ans = Router(agree, SpatialEngine(), "auto", confirm=True).answer(_patch_request(question))
    assert (ans.source, ans.reading) == ("geometry", rules)
    assert agree.asked[0].endswith("Question: How far is <object0>?\nTask:")
    assert agree.options[0] == " " + rules and len(agree.options) > 1
    other = "distance_to_camera unit=cm objects=0"  # a neighbour: the same task, another unit
    assert " " + other in agree.options
    disagree = Reader(other)
    ans = Router(disagree, SpatialEngine(), "auto", confirm=True).answer(_patch_request(question))
    assert (ans.source, ans.task) == ("model", None)
    assert ans.reason == ("answered by the model: not fully understood: the rules read "
                          f"'How far is <object0>?' as {rules}, but the model reads it as {other}")
    with pytest.raises(ValueError, match=f"but the model reads it as {other}"):
        Router(Reader(other), SpatialEngine(), "geometry", confirm=True).answer(
            _patch_request("How far is <object0>?"))
    planner = Reader(other)
    ans = Router(planner, SpatialEngine(), "geometry", confirm=True).answer(
        _patch_request("How far is <object0>?", task="distance_to_camera"))
    assert ans.source == "geometry" and planner.asked == []
    off = Reader(other)
    assert Router(off, SpatialEngine(), "auto").answer(_patch_request(question)).source == "geometry"
    assert off.asked == []


def test_candidate_readings_are_the_rules_reading_and_its_neighbours() -> None:
    """The neighbours of "How high is the top of <object0>?" (height_from_ground point=top, by hand): the
    same task at the centre and the bottom and in each other unit, and the one-object tasks (their
    defaults, the shared unit). Every candidate is a valid structured task."""
    from rynnec_ros.spatial import confirm
    from rynnec_ros.spatial.plan import parse_question, parse_structured

    parsed, _ = parse_question("How high is the top of <object0>?")
    assert parsed is not None
    found = confirm.candidates(SpatialPlan(parsed, [0], parsed.reading([0])))
    assert found[0] == "height_from_ground point=top unit=m objects=0"
    for neighbour in ("height_from_ground point=center unit=m objects=0",
                      "height_from_ground point=bottom unit=m objects=0",
                      "height_from_ground point=top unit=ft objects=0",
                      "object_height unit=m objects=0", "distance_to_camera unit=m objects=0"):
        assert neighbour in found
    assert len(found) == len(set(found)) <= confirm.MAX_CANDIDATES
    assert all(parse_structured(c).task for c in found)
    # compared per character: -2.0 over 4 characters is -0.5, -3.0 over 12 is -0.25, the higher
    verdict = confirm.judge(["abcd", "abcdefghijkl"], [-2.0, -3.0])
    assert (verdict.best, verdict.agreed, verdict.scores) == ("abcdefghijkl", False, (-0.5, -0.25))
    with pytest.raises(ValueError, match="2 candidates were scored"):
        confirm.judge(["a", "b"], [0.0])

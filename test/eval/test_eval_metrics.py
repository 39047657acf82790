"""Metrics against hand-computed values (RynnEC paper Eq. 1/2, released scorer variant, DAVIS J/F)."""

import numpy as np
import pytest

from rynnec_ros.eval import metrics
from rynnec_ros.eval.metrics import (
    boundary_f,
    global_iou,
    mean_boundary_f,
    mean_relative_accuracy,
    numeric_score,
    rotational_accuracy,
)


def test_thresholds() -> None:
    assert metrics.THRESHOLDS == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


@pytest.mark.parametrize(
    ("pred", "gt", "expected"),
    [
        (2.0, 2.0, 1.0),  # exact: all ten thresholds
        (1.5, 2.0, 0.5),  # rel 0.25 < 1-θ for θ ∈ {.50,.55,.60,.65,.70}
        (2.36, 2.0, 0.7),  # rel 0.18 < 1-θ for θ ≤ .80 → 7 thresholds
        (1.0, 2.0, 0.0),  # rel 0.5 is not < 0.5
        (3.0, 0.0, 0.0),  # zero ground truth: only an exact zero counts
        (0.0, 0.0, 1.0),
    ],
)
def test_mra(pred: float, gt: float, expected: float) -> None:
    assert mean_relative_accuracy(pred, gt) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("pred", "gt", "period", "ref", "expected"),
    [
        (60, 90, 360, 90, 1 - 30 / 90),
        (350, 10, 360, 90, 1 - 20 / 90),  # wraps through 0°
        (270, 90, 360, 90, 0.0),  # 180° off: clipped to 0
        (1, 11, 12, 3, 1 - 2 / 3),  # 11 → 1 o'clock is two hours, not ten
        (11, 1, 12, 3, 1 - 2 / 3),  # and the other way round
        (3, 3, 12, 3, 1.0),
    ],
)
def test_roa(pred: float, gt: float, period: float, ref: float, expected: float) -> None:
    assert rotational_accuracy(pred, gt, period, ref) == pytest.approx(expected)


def test_numeric_no_number_scores_zero() -> None:
    s = numeric_score("I cannot tell from the video.", "2 meters", "paper")
    assert s.score == 0.0 and s.pred_value is None and "no number" in s.reason


def test_numeric_unit_conversion_paper_protocol() -> None:
    assert numeric_score("about 150 cm", "2 meters", "paper").score == pytest.approx(0.5)
    assert numeric_score("6.5616 feet", "2 meters", "paper").score == pytest.approx(1.0)  # within 5 %
    assert numeric_score("78.74 inches", "2 meters", "paper").score == pytest.approx(1.0)
    assert numeric_score("2", "2 meters", "paper").score == 1.0  # bare number read in the reference's unit
    assert numeric_score("2 degrees", "2 meters", "paper").score == 0.0  # not a length


def test_paper_reader_in_as_preposition() -> None:
    # "2 in the image" is two of something in the image, not two inches (issue 13)
    assert metrics.read_quantity("There are 2 in the image.") == (2.0, None)
    assert metrics.read_quantity("3 In the box") == (3.0, None)
    assert metrics.read_quantity("about 12 in.") == (12.0, "in")
    assert metrics.read_quantity("it is 12 in long") == (12.0, "in")
    assert numeric_score("2 in the image", "2 meters", "paper").score == 1.0  # bare number → metres


def test_numeric_angles_paper_protocol() -> None:
    s = numeric_score("about 60 degrees", "You turned about 90 degrees.", "paper")
    assert s.score == pytest.approx(2 / 3)
    # 1 o'clock vs 11 o'clock: 60° apart after wrapping → 1 - 60/90
    assert numeric_score("1 o'clock", "<object0> will be at 11 o'clock.", "paper").score == pytest.approx(
        1 / 3
    )
    # units mix: 2 o'clock is 60°
    assert numeric_score("at 2 o'clock", "60 degrees", "paper").score == pytest.approx(1.0)


# Released benchmark/metrics.py numerical_score, worked by hand. Reader: re.search of
# (\d+(\.\d+)?)\s*(centimeters|meters|feet|inches|degrees|o'clock) with IGNORECASE; the matched unit is
# then looked up case-sensitively in {'centimeters': 100, 'meters': 1, 'inches': 39.3701, 'feet': 3.28084};
# 0.1 is added for every θ in (0.5, …, 0.95) with |Δ|/denominator < 1 - θ; exceptions → 0 in the loop.
TEN = sum([0.1] * 10)  # what ten additions of 0.1 give in binary floating point (0.9999999999999999)
UPSTREAM_CASES = [
    ("150 cm", "1.5 meters", 0.0),  # "cm" is not in the unit list → no prediction → 0
    ("1.5 m", "1.5 meters", 0.0),  # "m" neither
    ("2 meter", "2 meters", 0.0),  # singular does not match "meters"
    ("30°", "30 degrees", 0.0),  # "°" neither
    ("1,5 meters", "5 meters", TEN),  # the reader starts at "5"
    ("1.5 meters", "150 centimeters", TEN),  # 1.5/1 vs 150/100 m
    ("2 Meters", "2 meters", 0.0),  # "Meters" is not a key of the length table
    ("2 meters", "2 Meters", TEN),  # reference unit not in the table: raw MRA, 2 vs 2
    ("5 inches", "2 Meters", 0.0),  # raw MRA 5 vs 2: rel 1.5
    ("about 60 degrees", "90 degrees", 0.4),  # |30|/90 = .333 < .5, .45, .4, .35
    ("45 degrees", "30 degrees", 0.1 * 7),  # 15/90 = .1667 < 1-θ for θ ≤ .80 (accumulated: 0.7)
    ("3 meters", "3 degrees", TEN),  # a degree reference ignores the prediction's unit
    ("3 o'clock", "2 o'clock", 0.4),  # 1/3 = .333
    ("1 o'clock", "11 o'clock", 0.0),  # max(|1-11|, |-11-11|)/3: both ≥ .5
    ("11 o'clock", "1 o'clock", 0.0),  # |-1-1|/3 = .667
    ("12 o'clock", "1 o'clock", 0.4),  # |0-1|/3 = .333
    ("3 meters", "about 3", 0.0),  # reference without a unit: "o'clock" in None raises TypeError → 0
    ("3 meters", "0 meters", 0.0),  # ZeroDivisionError → 0
    ("2 apples in 3 meters", "3 meters", TEN),  # first number followed by a listed unit
    ("3 METERS", "3 meters", 0.0),  # matched in any case, looked up as written
    ("I cannot tell", "2 meters", 0.0),
]


@pytest.mark.parametrize(("pred", "gt", "expected"), UPSTREAM_CASES)
def test_numeric_upstream_reproduces_released_scorer(pred: str, gt: str, expected: float) -> None:
    s = numeric_score(pred, gt)  # upstream is the default protocol
    assert s.score == pytest.approx(expected, abs=1e-12)


def test_upstream_accumulates_like_the_released_loop() -> None:
    assert numeric_score("2 meters", "2 meters").score == TEN
    assert metrics.upstream_quantity("1,5 meters") == (5.0, "meters")
    assert metrics.upstream_quantity("150 cm") == (None, None)


def test_numeric_bad_input() -> None:
    with pytest.raises(ValueError, match="holds no number"):
        numeric_score("2 m", "far away", "paper")
    with pytest.raises(ValueError, match="protocol"):
        numeric_score("2 m", "2 m", "gpt")


def _rect(h: int, w: int, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
    m = np.zeros((h, w), bool)
    m[r0:r1, c0:c1] = True
    return m


def test_global_iou_over_all_frames() -> None:
    gt = [_rect(8, 8, 0, 4, 0, 4), np.zeros((8, 8), bool), _rect(8, 8, 0, 4, 0, 4)]
    pred = [_rect(8, 8, 0, 4, 2, 6), _rect(8, 8, 0, 1, 0, 4), _rect(8, 8, 0, 4, 0, 4)]
    # frame 0: ∩ 8, ∪ 24; frame 1 (empty GT): ∩ 0, ∪ 4; frame 2: ∩ 16, ∪ 16 → 24 / 44
    assert global_iou(pred, gt) == pytest.approx(24 / 44)


def test_global_iou_edge_cases() -> None:
    gt = [_rect(4, 4, 0, 2, 0, 2), None]
    assert global_iou([None, None], gt) == 0.0  # empty prediction
    assert global_iou([None, None], [None, np.zeros((4, 4), bool)]) == 1.0  # nothing to find, nothing found
    with pytest.raises(ValueError, match="predicted masks"):
        global_iou([None], gt)
    with pytest.raises(ValueError, match="no frames"):
        global_iou([], [])
    with pytest.raises(ValueError, match="shape"):
        global_iou([np.zeros((3, 3), bool), None], gt)


def test_boundary_f_shifted_square() -> None:
    gt = _rect(12, 12, 3, 7, 3, 7)
    pred = _rect(12, 12, 3, 7, 4, 8)
    # DAVIS boundary of a 4×4 square at rows/cols 3..6: row 2 (cols 2..6), col 2 (rows 3..6) and the
    # square's own last row/column = 5 + 4 + 7 = 16 pixels. Shifted one column right, the two boundaries
    # share row 2 cols 3..6 (4) and row 6 cols 3..6 (4): precision = recall = 8/16.
    assert boundary_f(pred, gt, bound_th=0) == pytest.approx(0.5)
    assert boundary_f(pred, gt, bound_th=1) == pytest.approx(1.0)  # within the 1-pixel tolerance
    assert boundary_f(gt, gt) == 1.0


def test_boundary_f_empty_cases() -> None:
    empty = np.zeros((12, 12), bool)
    sq = _rect(12, 12, 3, 7, 3, 7)
    assert boundary_f(empty, sq) == 0.0
    assert boundary_f(sq, empty) == 0.0
    assert boundary_f(empty, empty) == 1.0
    with pytest.raises(ValueError, match="differs"):
        boundary_f(np.zeros((3, 3), bool), sq)


def test_mean_boundary_f_on_annotated_frames_only() -> None:
    sq = _rect(12, 12, 3, 7, 3, 7)
    gt = [sq, None, sq]
    pred = [None, sq, sq]  # frame 1 is not annotated, so its false positive does not enter F
    assert mean_boundary_f(pred, gt, [0, 2]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no annotated"):
        mean_boundary_f(pred, gt, [])
    with pytest.raises(ValueError, match="outside"):
        mean_boundary_f(pred, gt, [5])


def test_accuracy_and_aggregation() -> None:
    assert metrics.accuracy([True, False, True, True]) == 0.75
    with pytest.raises(ValueError, match="empty"):
        metrics.accuracy([])
    recs = [{"t": "a", "score": 1.0}, {"t": "a", "score": 0.0}, {"t": "b", "score": 0.5}, {"score": 1.0}]
    assert metrics.group_scores(recs, "t", scale=100) == {"a": [100.0, 0.0], "b": [50.0]}
    assert metrics.mean_or_none([1.0, 0.0, 0.5]) == 0.5
    assert metrics.mean_or_none([]) is None
    assert metrics.j_and_f(0.5, 1.0) == 0.75

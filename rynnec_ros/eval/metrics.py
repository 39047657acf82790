"""Benchmark metrics, written from the definitions in the RynnEC, EmbSpatial-Bench and RoboBench papers.

Two numeric protocols exist for RynnEC-Bench because the paper and the released scorer disagree:
``"upstream"`` (the default) is the released ``benchmark/metrics.py`` ``numerical_score`` as it
behaves, reader included: the first ``<digits>[.<digits>] <unit>`` with the unit one of
``centimeters|meters|feet|inches|degrees|o'clock`` (matched in any case, then looked up
case-sensitively), MRA after conversion to metres, RoA as MRA thresholds on ``|Δ| / 90°`` (``/ 3 h``
for o'clock, which alone wraps, one way), and every case where the released code raises scored 0 as its
``evaluate`` loop does. ``"paper"`` follows Eq. 1/2 of the paper with our own reader (any common unit
spelling, continuous RoA with full wrap-around, degrees and o'clock interconvertible, a bare number
read in the reference's unit). Reports name the protocol they used.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rynnec_ros.core.parsing import parse_quantity, to_metres

THRESHOLDS: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
PROTOCOLS = ("upstream", "paper")
_LENGTH_UNITS = {"mm", "cm", "m", "km", "ft", "in", "yd"}
_DEGREES_PER_HOUR = 30.0


def mean_relative_accuracy(pred: float, gt: float) -> float:
    """MRA (paper Eq. 1): share of θ ∈ {0.50,…,0.95} with |pred−gt|/gt < 1−θ.

    A zero ground truth has no relative error; it scores 1 only for an exact zero prediction.
    """
    if gt == 0:
        return 1.0 if pred == 0 else 0.0
    rel = abs(pred - gt) / abs(gt)
    return sum(rel < 1.0 - t for t in THRESHOLDS) / len(THRESHOLDS)


def rotational_accuracy(pred: float, gt: float, period: float = 360.0, ref: float = 90.0) -> float:
    """RoA (paper Eq. 2): 1 − min(wrapped angular error / ref, 1); o'clock uses period 12, ref 3."""
    diff = abs(pred - gt) % period
    diff = min(diff, period - diff)
    return 1.0 - min(diff / ref, 1.0)


@dataclass
class NumericScore:
    """One numeric item's score and how it was read, kept in the results for auditing."""

    score: float
    metric: str
    gt_value: float | None
    gt_unit: str | None
    pred_value: float | None
    pred_unit: str | None
    reason: str = ""


def numeric_score(prediction: str, reference: str, protocol: str = "upstream") -> NumericScore:
    """Score a numeric answer: MRA for lengths and plain numbers, RoA for degrees and o'clock."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown numeric protocol {protocol!r}; expected one of {PROTOCOLS}")
    if protocol == "upstream":
        return upstream_numerical_score(prediction, reference)
    gt = read_quantity(reference)
    if gt is None:
        raise ValueError(f"reference answer {reference!r} holds no number")
    gt_value, gt_unit = gt
    pred = read_quantity(prediction)
    if pred is None:
        return NumericScore(0.0, "none", gt_value, gt_unit, None, None, "no number in the prediction")
    return _numeric_paper(gt_value, gt_unit, *pred)


# ----------------------------------------------------------------------------------------------------
# Paper protocol

# "2 in the image": "in" followed by a word is the preposition, unless the word continues a measurement
# ("12 in long", "3 in wide").
_PREPOSITION_IN_RE = re.compile(
    r"(?<=\d)(\s*)in(?=\s+(?!(?:tall|long|wide|high|deep|thick|across|away|apart)\b)[A-Za-z])",
    re.IGNORECASE,
)


def read_quantity(text: str) -> tuple[float, str | None] | None:
    """The paper protocol's reader: :func:`rynnec_ros.core.parsing.parse_quantity` with "N in <word>" read
    as a number followed by the preposition, not as N inches."""
    return parse_quantity(_PREPOSITION_IN_RE.sub(r"\1_in", text))


def _numeric_paper(gv: float, gu: str | None, pv: float, pu: str | None) -> NumericScore:
    unit = pu if pu is not None else gu  # a bare number is read in the question's (reference's) unit
    if gu in _LENGTH_UNITS:
        if unit not in _LENGTH_UNITS:
            return NumericScore(0.0, "MRA", gv, gu, pv, pu, f"length expected, got unit {unit!r}")
        return NumericScore(
            mean_relative_accuracy(to_metres(pv, unit), to_metres(gv, gu)), "MRA", gv, gu, pv, pu
        )
    if gu in ("deg", "oclock"):
        if unit not in ("deg", "oclock"):
            return NumericScore(0.0, "RoA", gv, gu, pv, pu, f"angle expected, got unit {unit!r}")
        gdeg = gv * _DEGREES_PER_HOUR if gu == "oclock" else gv
        pdeg = pv * _DEGREES_PER_HOUR if unit == "oclock" else pv
        return NumericScore(rotational_accuracy(pdeg, gdeg), "RoA", gv, gu, pv, pu)
    return NumericScore(mean_relative_accuracy(pv, gv), "MRA", gv, gu, pv, pu)


# ----------------------------------------------------------------------------------------------------
# Released protocol

UPSTREAM_UNITS = ("centimeters", "meters", "feet", "inches", "degrees", "o'clock")
# metres → unit, the released conversion factors
UPSTREAM_LENGTH = {"centimeters": 100.0, "meters": 1.0, "inches": 39.3701, "feet": 3.28084}
_UPSTREAM_RE = re.compile(r"(\d+(\.\d+)?)\s*(" + "|".join(UPSTREAM_UNITS) + ")", re.IGNORECASE)


def upstream_quantity(text: str) -> tuple[float | None, str | None]:
    """The released ``extract_number_and_unit``: first number directly followed by a listed unit.

    The unit comes back as written ("Meters"); "1,5 meters" reads as 5, "150 cm" as nothing.
    """
    m = _UPSTREAM_RE.search(text)
    return (float(m.group(1)), m.group(3)) if m else (None, None)


def _upstream_mra(pred: float, gt: float, ref: float | None = None) -> float:
    """The released ``calculate_MRA`` (``ref=None``) / ``calculate_MRA_degree``: 0.1 added per threshold
    passed, in the same order, so the float matches (ten passes give 0.9999999999999999)."""
    denom = gt if ref is None else ref
    score = 0.0
    for t in THRESHOLDS:
        if abs(pred - gt) / denom < 1 - t:
            score += 0.1
    return score


def upstream_numerical_score(prediction: str, reference: str) -> NumericScore:
    """The released ``numerical_score``, with its exceptions scored 0 as the released loop does."""
    gv, gu = upstream_quantity(reference)
    pv, pu = upstream_quantity(prediction)
    if pv is None:
        return NumericScore(0.0, "none", gv, gu, None, None, "no number+unit the released reader knows")
    try:
        if gu in UPSTREAM_LENGTH:
            if pu not in UPSTREAM_LENGTH:
                return NumericScore(0.0, "MRA", gv, gu, pv, pu, f"length expected, got unit {pu!r}")
            g, p = gv / UPSTREAM_LENGTH[gu], pv / UPSTREAM_LENGTH[pu]  # type: ignore[operator]
            return NumericScore(_upstream_mra(p, g), "MRA", gv, gu, pv, pu)
        if "o'clock" in gu:  # type: ignore[operator]  # None raises TypeError, as released
            score = max(_upstream_mra(pv, gv, 3), _upstream_mra(pv - 12, gv, 3))  # type: ignore[arg-type]
            return NumericScore(score, "RoA", gv, gu, pv, pu)
        if "degree" in gu:  # type: ignore[operator]
            return NumericScore(_upstream_mra(pv, gv, 90), "RoA", gv, gu, pv, pu)  # type: ignore[arg-type]
        return NumericScore(_upstream_mra(pv, gv), "MRA", gv, gu, pv, pu)  # type: ignore[arg-type]
    except (TypeError, ZeroDivisionError) as exc:
        return NumericScore(0.0, "error", gv, gu, pv, pu, f"released scorer raises {type(exc).__name__}: 0")


# ----------------------------------------------------------------------------------------------------
# Segmentation


def _stack(masks: Sequence[np.ndarray | None], shape: tuple[int, int]) -> np.ndarray:
    out = np.zeros((len(masks), *shape), dtype=bool)
    for i, m in enumerate(masks):
        if m is None:
            continue
        if m.shape != shape:
            raise ValueError(f"mask {i} has shape {m.shape}, expected {shape}")
        out[i] = m.astype(bool)
    return out


def global_iou(pred: Sequence[np.ndarray | None], gt: Sequence[np.ndarray | None]) -> float:
    """J: Σ|P∩G| / Σ|P∪G| over every frame of the clip (empty frames and ``None`` count as empty).

    Both empty → 1 (nothing to find, nothing predicted), following the DAVIS convention.
    """
    if len(pred) != len(gt):
        raise ValueError(f"{len(pred)} predicted masks for {len(gt)} ground-truth frames")
    if not gt:
        raise ValueError("no frames to score")
    shape = next((m.shape for m in (*gt, *pred) if m is not None), None)
    if shape is None:
        return 1.0
    p, g = _stack(pred, shape), _stack(gt, shape)
    union = np.logical_or(p, g).sum()
    return 1.0 if union == 0 else float(np.logical_and(p, g).sum() / union)


def _boundary(mask: np.ndarray) -> np.ndarray:
    """One-pixel boundary map as in the DAVIS toolkit (changes to the right, below, below-right)."""
    seg = mask.astype(bool)
    e = np.zeros_like(seg)
    s = np.zeros_like(seg)
    se = np.zeros_like(seg)
    e[:, :-1] = seg[:, 1:]
    s[:-1, :] = seg[1:, :]
    se[:-1, :-1] = seg[1:, 1:]
    b = (seg ^ e) | (seg ^ s) | (seg ^ se)
    b[-1, :] = seg[-1, :] ^ e[-1, :]
    b[:, -1] = seg[:, -1] ^ s[:, -1]
    b[-1, -1] = False
    return b


def _disk(radius: int) -> np.ndarray:
    y, x = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    return (x * x + y * y <= radius * radius).astype(np.uint8)


def boundary_f(pred: np.ndarray, gt: np.ndarray, bound_th: float = 0.008) -> float:
    """DAVIS boundary F-measure of one frame; tolerance ``ceil(bound_th · image diagonal)`` pixels."""
    import cv2

    if pred.shape != gt.shape:
        raise ValueError(f"prediction shape {pred.shape} differs from ground truth {gt.shape}")
    radius = int(bound_th if bound_th >= 1 else math.ceil(bound_th * math.hypot(*gt.shape)))
    fb, gb = _boundary(pred), _boundary(gt)
    kernel = _disk(radius)
    f_dil = cv2.dilate(fb.astype(np.uint8), kernel).astype(bool)
    g_dil = cv2.dilate(gb.astype(np.uint8), kernel).astype(bool)
    n_f, n_g = int(fb.sum()), int(gb.sum())
    if n_f == 0 and n_g == 0:
        return 1.0
    if n_f == 0 or n_g == 0:
        return 0.0  # precision/recall of (1,0) or (0,1): F = 0
    precision = float((fb & g_dil).sum()) / n_f
    recall = float((gb & f_dil).sum()) / n_g
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def mean_boundary_f(
    pred: Sequence[np.ndarray | None], gt: Sequence[np.ndarray | None], frames: Iterable[int]
) -> float:
    """F averaged over the annotated frames (RynnEC-Bench's ``mask_ids``)."""
    idx = sorted(set(frames))
    if not idx:
        raise ValueError("no annotated frames for the boundary F-measure")
    shape = next((m.shape for m in gt if m is not None), None)
    if shape is None:
        raise ValueError("ground truth holds no mask")
    values = []
    for i in idx:
        if not 0 <= i < len(gt):
            raise ValueError(f"annotated frame {i} outside the clip of {len(gt)} frames")
        g = gt[i] if gt[i] is not None else np.zeros(shape, bool)
        p = pred[i] if pred[i] is not None else np.zeros(shape, bool)
        values.append(boundary_f(p.astype(bool), g.astype(bool)))
    return float(np.mean(values))


def j_and_f(j: float, f: float) -> float:
    return (j + f) / 2.0


# ----------------------------------------------------------------------------------------------------
# Choice answers and aggregation


def accuracy(correct: Iterable[bool | float]) -> float:
    """Mean of 0/1 outcomes; raises on an empty set rather than inventing a score."""
    values = [float(c) for c in correct]
    if not values:
        raise ValueError("accuracy of an empty set")
    return sum(values) / len(values)


def mean_or_none(values: Iterable[float]) -> float | None:
    """Sample mean, or ``None`` for a table cell without items (shown as "—", never as 0)."""
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def group_scores(
    records: Iterable[Mapping[str, object]], key: str, value: str = "score", scale: float = 1.0
) -> dict[str, list[float]]:
    """Scores per value of ``key`` (task, category, source …); records lacking either field are skipped.

    Means over these lists are sample-weighted, which is how RynnEC-Bench and EmbSpatial aggregate.
    """
    out: dict[str, list[float]] = defaultdict(list)
    for r in records:
        k, v = r.get(key), r.get(value)
        if k is not None and v is not None:
            out[str(k)].append(float(v) * scale)  # type: ignore[arg-type]
    return dict(out)

"""The one mask codec (``core.masks``): COCO RLE read and written as pycocotools does, checked first.

Expected runs and strings are worked by hand from the COCO RLE definition in pycocotools' ``maskApi.c``
(``rleEncode``: runs column by column, alternating from a possibly empty run of zeros; ``rleToString``:
runs after the second stored as differences to the run two back, 5 bits per character from '0', bit 0x20
to continue, bit 0x10 of the last character as the sign), not computed with our code; pycocotools itself
is the second, independent reader in the round trips.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pycocotools import mask as mask_utils

from rynnec_ros.core import masks

# 2×3, rows "0 1 1" and "1 0 0"; column by column 0,1 | 1,0 | 1,0 -> one 0, two 1s, one 0, one 1, one 0.
TWO_BY_THREE = np.array([[0, 1, 1], [1, 0, 0]], bool)
TWO_BY_THREE_RUNS = [1, 2, 1, 1, 1]
# rleToString: 1, 2, 1, then 1-2 = -1 ('O' = 48+31: five bits 11111, sign bit set, no continuation), 1-1 = 0.
TWO_BY_THREE_STRING = "121O0"


def test_runs_go_column_by_column_from_a_run_of_zeros() -> None:
    assert np.array_equal(masks.decode({"size": [2, 3], "counts": TWO_BY_THREE_RUNS}), TWO_BY_THREE)
    assert np.array_equal(masks.decode({"size": [2, 3], "counts": TWO_BY_THREE_STRING}), TWO_BY_THREE)
    assert masks.encode(TWO_BY_THREE) == {"size": [2, 3], "counts": TWO_BY_THREE_STRING}


def test_a_mask_starting_with_ones_has_an_empty_first_run() -> None:
    want = np.array([[1, 1], [0, 1]], bool)  # columns 1,0 | 1,1 -> zero 0s, one 1, one 0, two 1s
    assert np.array_equal(masks.decode({"size": [2, 2], "counts": [0, 1, 1, 2]}), want)
    assert masks.encode(want)["counts"] == "0111"  # 0, 1, 1, then 2-1 = 1


def test_all_zero_all_one_and_multi_character_runs() -> None:
    assert not masks.decode({"size": [3, 4], "counts": [12]}).any()
    assert masks.decode({"size": [3, 4], "counts": "0<"}).all()  # '<' = 48+12
    # 100 = 0b11_00100: low five bits 4 with the continuation bit ('T' = 48+36), then 3 ('3').
    assert masks.encode(np.zeros((10, 10), bool))["counts"] == "T3"
    assert not masks.decode({"size": [10, 10], "counts": b"T3"}).any()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pycocotools under numpy 2, not ours
@settings(max_examples=60, deadline=None)
@given(arrays(bool, st.tuples(st.integers(1, 17), st.integers(1, 17))))
def test_round_trips_and_pycocotools_reads_what_we_write(mask: np.ndarray) -> None:
    rle = masks.encode(mask)
    assert np.array_equal(masks.decode(rle), mask)
    theirs = mask_utils.decode({"size": rle["size"], "counts": rle["counts"].encode()})
    assert np.array_equal(theirs.astype(bool), mask)
    # pycocotools' own uncompressed form (frPyObjects) decodes to the same mask
    runs = masks.decode({"size": rle["size"], "counts": _runs(mask)})
    assert np.array_equal(runs, mask)


def _runs(mask: np.ndarray) -> list[int]:
    """Column-major run lengths from a zero run, written out with a plain loop (the definition)."""
    out, current, n = [], False, 0
    for v in mask.T.ravel():
        if bool(v) != current:
            out.append(n)
            current, n = bool(v), 0
        n += 1
    return [*out, n]


@pytest.mark.parametrize(
    ("rle", "match"),
    [
        ({"size": [2, 2], "counts": [1, 2]}, "sum to 3, expected 2×2 = 4"),
        ({"size": [48, 64], "counts": [10**12]}, "sum to 1000000000000"),
        ({"size": [2, 2], "counts": [-1, 5]}, "negative"),
        ({"size": [2, 2], "counts": ["a", "b"]}, "must be an integer"),
        ({"size": [2, 2], "counts": [1.5, 2.5]}, "must be an integer"),
        ({"size": [2, 2], "counts": [True, 3]}, "must be an integer"),
        ({"size": [2, 2], "counts": [0, 1, 0, 1, 0, 1]}, "6 runs"),
        ({"size": [2, 2], "counts": 4}, "list of run lengths or a COCO string"),
        ({"size": [2, 3], "counts": TWO_BY_THREE_STRING + "5"}, "sum to more than 6"),
        ({"size": [2, 4], "counts": TWO_BY_THREE_STRING}, "sum to 6, expected 2×4 = 8"),
        ({"size": [2, 3], "counts": "121O"}, "sum to 5"),
        ({"size": [2, 3], "counts": "T"}, "ends inside a run length"),
        ({"size": [2, 2], "counts": "O5"}, "negative"),  # a first run of -1
        ({"size": [2, 2], "counts": "héllo"}, "characters '0'..'o'"),
        ({"size": "big", "counts": [1]}, r"\[height, width\]"),
        ({"size": [0, 5], "counts": []}, "empty"),
        ({"size": [2, -2], "counts": []}, "empty"),
        ({"counts": [4]}, r"\[height, width\]"),
        ([0, 4], "object"),
    ],
)
def test_malformed_masks_are_refused_before_pycocotools(rle: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        masks.decode(rle)


@pytest.mark.parametrize(
    "rle",
    [
        {"size": [100000, 100000], "counts": [0, 100000 * 100000]},  # consistent, 10^10 pixels
        {"size": [100000, 100000], "counts": [7, 5]},
        {"size": [100000, 100000], "counts": "T3"},
    ],
)
def test_the_size_is_checked_before_anything_is_allocated(rle: dict[str, Any]) -> None:
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="100000×100000") as err:
        masks.decode(rle, shape=(48, 64))
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "frame's 48×64" in str(err.value)
    assert peak < 1 << 20 and elapsed < 0.5, (peak, elapsed)
    with pytest.raises(ValueError, match="budget of 8294400 pixels"):
        masks.decode(rle, max_pixels=3840 * 2160)


def test_the_pixel_budget_can_be_lifted_or_lowered() -> None:
    rle = {"size": [4, 4], "counts": [16]}
    with pytest.raises(ValueError, match="budget of 15 pixels"):
        masks.decode(rle, max_pixels=15)
    assert masks.decode(rle).shape == (4, 4)


def test_a_huge_counts_string_stops_at_the_declared_size() -> None:
    """A 1 MB string of maximal runs on a 48×64 mask is refused after its first characters."""
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="more than 3072"):
        masks.decode({"size": [48, 64], "counts": "oooo?" * 200_000})
    assert time.perf_counter() - t0 < 0.5

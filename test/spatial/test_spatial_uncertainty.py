"""Geometric answers carry an uncertainty (issue 23): checked against the scene generator's model.

The truth is the scene model's (``scenes/truth.py`` on the generator's boxes and poses), never the
engine's; the depth noise is the generator's own (``scene.degrade_depth``: relative Gaussian noise and
holes). One rendered window (320×240, 6 frames, seed 0: a sofa, a cabinet and a chair seen well), the
questions each object's views can answer (``synth.observability``, as gen-scene and the paraphrase
evaluation ask them), without and with noise.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from rynnec_ros.core.types import Frame, Region, Request
from rynnec_ros.scenes.scene import Scene, degrade_depth, make_scene, render
from rynnec_ros.scenes.synth import observability
from rynnec_ros.scenes.truth import ground_truth
from rynnec_ros.spatial.engine import SpatialEngine
from rynnec_ros.spatial.plan import parse_structured
from rynnec_ros.spatial.points import backproject, transform

FRAMES = 6
pytestmark = pytest.mark.slow
# synth.observability's check: (task, window frames, object ids) -> whether the views span what it asks
Observable = Callable[[str, list[int], list[int]], bool]
ONE = ["distance_to_camera", "height_from_ground point=top", "object_height", "direction_degrees"]
TWO = ["center_distance", "height_difference point=top"]


@pytest.fixture(scope="module")
def window() -> tuple[Scene, list[Frame], list[Region], list[int], Observable]:
    scene = make_scene(0, FRAMES, 320, 240)
    frames, ids, surfaces = [], [], {o.object_id: {} for o in scene.objects}
    for i in range(FRAMES):
        T = scene.world_T_camera(i)
        r = render(scene, T)
        frames.append(Frame(rgb=r.rgb, stamp_ns=i, depth=r.depth, K=scene.camera.K, world_T_camera=T))
        ids.append(r.ids)
        for oid in surfaces:
            rows, cols = np.nonzero(r.ids == oid)
            if rows.size:
                surfaces[oid][i] = transform(T, backproject(r.depth, scene.camera.K, rows, cols))
    seen = [o for o in scene.objects if sum(int((m == o.object_id).sum() > 100) for m in ids) >= 3][:3]
    regions = [
        Region(o.object_id, {i: m == o.object_id for i, m in enumerate(ids) if (m == o.object_id).any()})
        for o in seen
    ]
    observable = observability(scene, surfaces)
    return scene, frames, regions, [o.object_id for o in seen], observable


@pytest.fixture(scope="module")
def errors(window) -> dict[float, dict[str, tuple[float, float]]]:
    """Per depth-noise level (5 % holes with noise): each question's error and uncertainty."""
    return {noise: _errors(window, noise, 0.05 if noise else 0.0) for noise in (0.0, 0.01, 0.02)}


def _errors(window, noise: float, holes: float) -> dict[str, tuple[float, float]]:
    """Per question: (answer − truth, reported uncertainty), in the answer's unit."""
    scene, clean, regions, ids, observable = window
    rng = np.random.default_rng(3)
    frames = [replace(f, depth=degrade_depth(f.depth, noise, holes, rng)) for f in clean]
    engine = SpatialEngine()
    out = {}
    asked = [(t, (k,)) for k in range(len(ids)) for t in ONE]
    asked += [(t, ks) for ks in itertools.permutations(range(len(ids)), 2) for t in TWO]
    for task, ks in asked:
        if not observable(task.split()[0], list(range(FRAMES)), [ids[k] for k in ks]):
            continue
        truth = ground_truth(parse_structured(task), scene, [scene.object(ids[k]) for k in ks], FRAMES - 1)
        if truth is None:  # a close call by the scene model's own margins
            continue
        ans = engine.answer(Request("", frames, regions=[regions[k] for k in ks], task=task))
        assert ans.value is not None and ans.uncertainty is not None, ans.reason
        assert ans.uncertainty_unit == ans.unit
        err = ans.value - truth["value"]
        if ans.unit == "deg":
            err = (err + 180.0) % 360.0 - 180.0
        out[f"{task} {ks}"] = (err, ans.uncertainty)
    return out


def test_without_depth_noise_the_uncertainty_is_small(errors) -> None:
    """Exact depth leaves only the image's resolution (a pixel and the 3-pixel edge band at 2-4 m, f = 277
    px: about 1 cm per face, a few tenths of a degree). The truth lies within 3σ for 14 of the 21
    questions; the 7 others involve the sofa, whose thin backrest the robust extents trim (its top 8 cm
    low): a bias of the method on that shape, which no term from the data's noise describes
    (docs/spatial.md, "Uncertainty")."""
    clean = errors[0.0]
    assert len(clean) == 21
    lengths = [s for q, (_, s) in clean.items() if "direction" not in q]
    assert max(lengths) < 0.03 and max(s for q, (_, s) in clean.items() if "direction" in q) < 1.0
    assert sum(abs(e) <= 3 * s for e, s in clean.values()) >= 14, clean
    assert all(abs(e) <= 3 * s for q, (e, s) in clean.items() if "0" not in q.split("(")[1]), clean


def test_with_depth_noise_the_error_is_within_the_uncertainty_and_the_uncertainty_grows(errors) -> None:
    """With the generator's 2 % depth noise and 5 % holes the error against the truth is within 1σ for 21
    of the 21 questions here (asserted: 2σ for 90 %), and every uncertainty is larger than without noise
    and than with 1 %."""
    clean, low, high = errors[0.0], errors[0.01], errors[0.02]
    assert set(high) == set(low) == set(clean)
    within = sum(abs(e) <= 2 * s for e, s in high.values())
    assert within >= 0.9 * len(high), high
    assert all(clean[q][1] < low[q][1] < high[q][1] for q in high)

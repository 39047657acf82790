"""The second reader's plumbing on the tiny random checkpoint (issue 24, item 3).

Random weights read nothing, so the test does not expect agreement: it checks that the router asks the
real engine to score the rules' reading and its neighbours on the request's own frames and regions, and
that it measures exactly when that reading scores best per character (the verdict recomputed here from
the engine's own ``score_options`` on the same prompt), else hands the question to the model naming both
readings. How to evaluate a real checkpoint: docs/spatial.md, "A second reader".
"""

from __future__ import annotations

import numpy as np

from rynnec_ros.core.types import Frame, Region, Request
from rynnec_ros.router import Router
from rynnec_ros.spatial import SpatialEngine, confirm


def test_the_model_confirms_or_refuses_the_rules_reading(engine_noreuse) -> None:
    # an 8×8-pixel patch 1.5 m ahead of a wall at 3 m (f = 32 px on a 32×32 frame), as in test_router_text
    K = np.array([[32.0, 0, 16], [0, 32.0, 16], [0, 0, 1]])
    depth = np.full((32, 32), 3.0, np.float32)
    mask = np.zeros((32, 32), bool)
    mask[12:20, 12:20] = True
    depth[mask] = 1.5
    rgb = np.zeros((32, 32, 3), np.uint8)
    rgb[mask] = 200
    request = Request("How far is <object0> from me?", [Frame(rgb=rgb, depth=depth, K=K)],
                      regions=[Region(7, {0: mask})], max_new_tokens=4)
    spatial = SpatialEngine()
    planned = spatial.plan(request)
    options = confirm.candidates(planned)
    assert options[0] == "distance_to_camera unit=m objects=0"
    scores = engine_noreuse.score_options(Request(confirm.prompt(request.question), request.frames,
                                                  request.regions, options=[" " + o for o in options]))
    assert len(scores) == len(options) and np.all(np.isfinite(scores))
    verdict = confirm.judge(options, scores)
    ans = Router(engine_noreuse, spatial, "auto", confirm=True).answer(request)
    if verdict.agreed:
        assert (ans.source, ans.reading) == ("geometry", options[0])
    else:
        assert ans.source == "model"
        assert ans.reason == f"answered by the model: {verdict.reason(request.question)}"


def test_eval_counts_what_the_second_reader_confirms_and_vetoes(engine_noreuse) -> None:
    """``eval-paraphrases --readings --confirm-checkpoint``: every sampled reading is counted once, as
    right or silent wrong (the dev split has no silent wrong reading) and as confirmed or vetoed."""
    from rynnec_ros.eval.paraphrases import split
    from rynnec_ros.eval.spatial import confirmed_readings
    from rynnec_ros.spatial.plan import parse_question

    c = confirmed_readings("dev", engine_noreuse, every=1000)
    # dev questions 0, 1000, 2000, ... that the rules read (the dev split grows each blind round, and the
    # rules refuse some of its questions on purpose): each is asked once
    sampled = [q for i, (_, _, q) in enumerate(split("dev")) if i % 1000 == 0 and parse_question(q)[0]]
    assert c["asked"] == len(sampled) >= 5
    assert c["right_confirmed"] + c["right_vetoed"] == c["asked"]
    assert c["wrong_confirmed"] == c["wrong_vetoed"] == 0

"""Point and box prompts on SAM 2, against Meta's ``sam2`` package (1.1.0).

``test/data/sam2-prompts/reference.npz`` holds what the package's own PromptEncoder and MaskDecoder,
loaded with this fixture checkpoint's SAM 2 weights, decode for three prompts on the first frame of case
c1 (one click; two positive clicks and a negative one; a box with a click), following
``SAM2ImagePredictor._predict`` (see make_reference.py there for the steps). The engine's decode of the
same prompts must match: the sparse prompt embeddings, the decoder's logits and IoU estimates, and the
frame-size masks (pixels within 1e-3 of the 0 logit threshold excepted).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rynnec_ros.model.engine import RynnEC

from .conftest import CHECKPOINT, Case, request

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "sam2-prompts" / "reference.npz"
PROMPTS = ("one_click", "clicks_pos_neg", "box_and_click")


@pytest.fixture(scope="module")
def decoded() -> dict[str, tuple[dict[str, np.ndarray], object, torch.Tensor]]:
    engine = RynnEC.from_pretrained(CHECKPOINT)
    sam2 = engine.model.sam2
    assert sam2 is not None
    frame = Case("c1_seg_224x168").frames[0]
    feats = sam2.image_features(sam2.preprocess(frame))
    with np.load(REFERENCE, allow_pickle=False) as z:
        ref = {k: z[k] for k in z.files}
    h, w = ref["frame_hw"].tolist()
    out = {}
    for name in PROMPTS:
        r = {k.split("/", 1)[1]: v for k, v in ref.items() if k.startswith(name + "/")}
        points, labels = torch.from_numpy(r["points"]), torch.from_numpy(r["labels"])
        size = sam2.config.image_size
        sparse, _ = sam2.prompt(points / torch.tensor([w, h]) * size, labels)
        out[name] = (r, sam2.decode_points(feats, points, labels, h, w), sparse[0])
    return out


@pytest.mark.parametrize("name", PROMPTS)
def test_point_and_box_prompts_decode_as_the_sam2_package_does(name: str, decoded) -> None:
    ref, ours, sparse = decoded[name]
    np.testing.assert_allclose(sparse.numpy(), ref["sparse"], rtol=1e-5, atol=1e-5)
    low = ours.lowres_logits[:, ::4, ::4].numpy()
    np.testing.assert_allclose(low, ref["low_res_every4"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ours.iou.numpy(), ref["iou"], rtol=1e-5, atol=1e-5)
    want = np.unpackbits(ref["masks_packed"], axis=-1, count=ours.logits.shape[-1]).astype(bool)
    got = (ours.logits > 0).numpy()
    decided = np.abs(ours.logits.numpy()) > 1e-3
    assert np.array_equal(got[decided], want[decided])
    assert ours.best_index == int(np.argmax(ref["iou"]))
    assert np.array_equal(ours.mask, want[ours.best_index] | (~decided[ours.best_index] & ours.mask))


@pytest.fixture(scope="module")
def engine() -> RynnEC:
    return RynnEC.from_pretrained(CHECKPOINT)


def _reference(name: str) -> dict[str, np.ndarray]:
    with np.load(REFERENCE, allow_pickle=False) as z:
        return {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(name + "/")}


def test_a_prompted_region_is_the_packages_best_mask_and_the_answer_returns_it(engine: RynnEC) -> None:
    """A question about a region given by two clicks and a correction: the region is the mask the package
    picks (its highest-IoU candidate), the model reads it as a <REGION>, and the answer returns it."""
    from rynnec_ros.core.types import Prompt, Region

    ref = _reference("clicks_pos_neg")
    frames = Case("c1_seg_224x168").frames
    pts = [tuple(map(float, p)) for p in ref["points"]]
    region = Region(3, {}, "cup", prompts=(Prompt(0, pts, tuple(int(v) for v in ref["labels"])),))
    req = request(frames, "What is <object0>?", [region], max_new_tokens=4)
    ans = engine.answer(req)
    assert [r.object_id for r in ans.prompted] == [3] and ans.object_ids == [3]
    (got,) = ans.prompted
    best = int(np.argmax(ref["iou"]))
    want = np.unpackbits(ref["masks_packed"], axis=-1, count=frames[0].shape[1]).astype(bool)[best]
    assert (got.masks[0] != want).mean() < 1e-3  # only pixels at the 0 logit threshold may differ
    # the other frames' masks come from SAM 2's propagation (test_tracking.py); all are the region
    assert set(got.masks) <= set(range(len(frames))) and ans.frame_indices == sorted(got.masks)
    # the same region given as those masks is the same question to the model
    as_mask = engine.answer(request(frames, "What is <object0>?", [Region(3, dict(got.masks))],
                                    max_new_tokens=4))
    assert as_mask.token_ids == ans.token_ids


@pytest.mark.parametrize(("prompt", "message"), [
    (dict(frame=5, points=[(10, 10)], labels=[1]), r"frame 5 out of range for \d+ frames"),
    (dict(frame=0, points=[(10, 10)], labels=[0]), "needs a point on the object"),
    (dict(frame=0, points=[(10, 10)], labels=[1, 1]), "1 points but 2 labels"),
    (dict(frame=0, points=[(10, 10)], labels=[2]), "must be 1 .* or 0"),
    (dict(frame=0, points=[(500, 10)], labels=[1]), "outside the 224×168 frame 0"),
    (dict(frame=0, box=(50, 40, 20, 60)), "x0 < x1 and y0 < y1"),
    (dict(frame=0, points=[(float("nan"), 3)], labels=[1]), "finite"),
    (dict(frame=True, points=[(1, 1)], labels=[1]), "integer index"),
    (dict(frame=0), "at least one point or a box"),
])
def test_bad_prompts_are_refused_with_the_reason(engine: RynnEC, prompt: dict, message: str) -> None:
    from rynnec_ros.core.types import Prompt, Region

    frames = Case("c1_seg_224x168").frames
    req = request(frames, "What is <object0>?", [Region(1, {}, prompts=(Prompt(**prompt),))])
    with pytest.raises(ValueError, match=message):
        engine.resolve_prompts(req)

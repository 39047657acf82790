"""Writes reference.npz: what Meta's ``sam2`` package (1.1.0) decodes for point and box prompts on the
tiny fixture checkpoint's SAM 2 weights. Run once, by hand, where the package is importable:

    SAM2_BUILD_CUDA=0 pip install --no-deps --no-build-isolation --target /tmp/sam2pkg \
        sam2==1.1.0 hydra-core iopath omegaconf antlr4-python3-runtime==4.9.3 portalocker
    PYTHONPATH=/tmp/sam2pkg:. python test/data/sam2-prompts/make_reference.py

The package's own ``PromptEncoder`` and ``MaskDecoder`` are built with the checkpoint's SAM 2 sizes and
loaded strictly with its ``sam_prompt_encoder.*`` / ``sam_mask_decoder.*`` tensors. The decode steps are
those of ``SAM2ImagePredictor._predict`` (sam2/sam2_image_predictor.py; its ``SAM2Transforms`` needs
torchvision, so its two coordinate and mask steps are written out here as the package defines them):
``transform_coords(normalize=True)`` scales frame pixels by S/W, S/H; a box is two points labelled 2, 3
ahead of the clicks; ``sam_prompt_encoder(points=..., boxes=None, masks=None)``; ``sam_mask_decoder(...,
multimask_output=True, repeat_image=False)``; ``postprocess_masks`` is a bilinear resize to the frame
size (no hole filling at its default max_hole_area 0) and ``> mask_threshold`` 0.

The image features fed to the decoder are this project's (``Sam2Model.image_features`` of the case's
first frame, which the RynnEC parity tests hold to upstream), so the test checks the prompt path alone.
Low-resolution logits are kept on every 4th row and column (the file stays small); the frame-size masks
whole, bit-packed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from safetensors.torch import load_file
from sam2.modeling.sam.mask_decoder import MaskDecoder
from sam2.modeling.sam.prompt_encoder import PromptEncoder
from sam2.modeling.sam.transformer import TwoWayTransformer

from rynnec_ros.model.engine import RynnEC

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "rynnec-tiny"
CASE = FIXTURE / "cases" / "c1_seg_224x168"
# (x, y) frame pixels and labels; a box is (x0, y0, x1, y1)
PROMPTS = {
    "one_click": {"points": [[150.0, 80.0]], "labels": [1], "box": None},
    "clicks_pos_neg": {"points": [[60.0, 40.0], [170.0, 120.0], [100.0, 90.0]], "labels": [1, 1, 0],
                       "box": None},
    "box_and_click": {"points": [[120.0, 70.0]], "labels": [1], "box": [80.0, 30.0, 200.0, 150.0]},
}


def main() -> None:
    torch.manual_seed(0)
    engine = RynnEC.from_pretrained(FIXTURE / "checkpoint")
    ours = engine.model.sam2
    cfg = ours.config
    d, e, s = cfg.d_model, cfg.embedding_size, cfg.image_size
    pe = PromptEncoder(embed_dim=d, image_embedding_size=(e, e), input_image_size=(s, s), mask_in_chans=16)
    dec = MaskDecoder(
        num_multimask_outputs=3,
        transformer=TwoWayTransformer(depth=2, embedding_dim=d, mlp_dim=2048, num_heads=8),
        transformer_dim=d, iou_head_depth=3, iou_head_hidden_dim=256, use_high_res_features=True,
        iou_prediction_use_sigmoid=cfg.iou_prediction_use_sigmoid, pred_obj_scores=True,
        pred_obj_scores_mlp=cfg.pred_obj_scores_mlp, use_multimask_token_for_obj_ptr=True,
    )
    sd = load_file(str(FIXTURE / "checkpoint" / "model.safetensors"))
    root = "grounding_encoder.sam2_model."
    for module, name in ((pe, "sam_prompt_encoder."), (dec, "sam_mask_decoder.")):
        module.load_state_dict({k[len(root + name):]: v for k, v in sd.items() if k.startswith(root + name)})
        module.eval()

    meta = json.loads((CASE / "case.json").read_text())
    frame = np.asarray(Image.open(CASE / meta["frame_files"][0]).convert("RGB"))
    h, w = frame.shape[:2]
    feats = ours.image_features(ours.preprocess(frame))
    out: dict[str, np.ndarray] = {"frame_hw": np.array([h, w])}
    with torch.inference_mode():
        for name, p in PROMPTS.items():
            coords = torch.tensor(p["points"], dtype=torch.float32)
            labels = torch.tensor(p["labels"], dtype=torch.int32)
            if p["box"] is not None:
                coords = torch.cat([torch.tensor(p["box"], dtype=torch.float32).reshape(2, 2), coords])
                labels = torch.cat([torch.tensor([2, 3], dtype=torch.int32), labels])
            unnorm = coords.clone()
            unnorm[:, 0] = unnorm[:, 0] / w * s
            unnorm[:, 1] = unnorm[:, 1] / h * s
            sparse, dense = pe(points=(unnorm[None], labels[None]), boxes=None, masks=None)
            low_res, iou, _, _ = dec(
                image_embeddings=feats.image_embed, image_pe=pe.get_dense_pe(),
                sparse_prompt_embeddings=sparse, dense_prompt_embeddings=dense, multimask_output=True,
                repeat_image=False,
                high_res_features=list(feats.high_res_feats),
            )
            masks = F.interpolate(low_res.float(), (h, w), mode="bilinear", align_corners=False) > 0.0
            out[f"{name}/points"] = coords.numpy()
            out[f"{name}/labels"] = labels.numpy()
            out[f"{name}/sparse"] = sparse[0].numpy()
            out[f"{name}/low_res_every4"] = low_res[0, :, ::4, ::4].numpy()
            out[f"{name}/iou"] = iou[0].numpy()
            out[f"{name}/masks_packed"] = np.packbits(masks[0].numpy(), axis=-1)
    np.savez_compressed(HERE / "reference.npz", **out)
    print({k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main()

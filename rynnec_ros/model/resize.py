"""Bicubic resize with the pixels of Pillow 10.x, which upstream used to make the reference outputs.

Newer Pillow releases (e.g. 13.0) round differently for some pixels (up to ±10 grey levels on upscaled
640×480 frames) when one ``resize`` call changes both axes. One call per axis — horizontal, then
vertical, each with 8-bit clipping, which is what Pillow 10 did inside one call — gives Pillow 10's
pixels exactly (checked against a numpy re-implementation of Pillow 10 on the parity fixture and on
random shapes, see ``test/model/test_model_consistency.py``) and runs in Pillow's C code.
"""

from __future__ import annotations

import numpy as np
from PIL import Image


def resize_bicubic(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """``Image.fromarray(img).resize((width, height), Image.BICUBIC)`` of Pillow 10.x, for H×W×C uint8."""
    if img.ndim != 3 or img.dtype != np.uint8 or img.shape[2] not in (1, 3, 4):
        raise ValueError(
            f"expected an H×W×C uint8 image with 1, 3 or 4 channels, got {img.shape} {img.dtype}"
        )
    if width < 1 or height < 1:
        raise ValueError(f"target size must be positive, got {width}×{height}")
    in_h, in_w = img.shape[:2]
    im = Image.fromarray(np.ascontiguousarray(img[..., 0] if img.shape[2] == 1 else img))
    if in_w != width:
        im = im.resize((width, in_h), Image.Resampling.BICUBIC)
    if in_h != height:
        im = im.resize((width, height), Image.Resampling.BICUBIC)
    out = np.asarray(im)
    return np.array(out.reshape(height, width, img.shape[2]))

"""Peak activation memory of the vision tower and SAM 2's image encoder at the released models' sizes, each
in a fresh process (issue 26, item 4: what the memory budget's allowance has to cover).

RynnEC-2B and -7B share both modules: VL3-SigLIP-NaViT (``VisionConfig``'s defaults: 1152 wide, 27 layers,
16 heads, FFN 4304) and SAM 2.0 Hiera-L (``Sam2Config.hiera_l()``). A child interpreter builds one module
with random float32 weights at those sizes (the values do not change the memory), prepares its input —
one frame of ``width``×``height`` through the engine's own preprocessing for the vision tower (patches in
the engine's layout and token count), the 1024×1024 image SAM 2 always gets — records its RSS, resets the
kernel's high-water mark (``/proc/self/clear_refs`` ← 5) and runs one forward pass under
``torch.inference_mode``, with the node's allocator setting. ``peak_mb`` = ``VmHWM`` − that RSS: the
memory the pass needed above weights and input, allocator slack included.

The vision tower runs its layers one after another and inference frees each layer's intermediates, so
its peak does not depend on depth; the child builds the first ``layers`` of the 27 (a full-depth pass
takes minutes on a small CPU) and the section measures two depths to show the peak does not move.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from rynnec_ros.bench.measure import rss_mb


def _child(component: str, width: int, height: int, layers: int) -> dict[str, Any]:
    """Runs in the child: one forward pass of ``component`` at the released size; its memory."""
    import ctypes

    import numpy as np
    import torch

    # the node's allocator setting (ros/process.py): blocks above 128 KiB are mapped and returned when
    # freed; with glibc's rising default threshold the freed layer outputs stay in the heap and the peak
    # grows with depth (~22 MB per layer here), which the node does not see
    ctypes.CDLL("libc.so.6").mallopt(-3, 128 << 10)  # M_MMAP_THRESHOLD
    torch.manual_seed(0)
    if component == "vision":
        from rynnec_ros.model.config import ProcessorConfig, VisionConfig
        from rynnec_ros.model.processing import preprocess_frame
        from rynnec_ros.model.vision import Videollama3VisionEncoderModel

        cfg = VisionConfig(num_hidden_layers=layers)
        module: torch.nn.Module = Videollama3VisionEncoderModel(cfg).eval()
        frame = np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)
        prep = preprocess_frame(frame, 1, ProcessorConfig(), merge=2)
        pixels = torch.from_numpy(prep.pixel_values)
        tokens = prep.grid_h * prep.grid_w

        def run() -> Any:
            return module(pixels, prep.grid_h, prep.grid_w, 2)
    elif component == "sam2":
        from rynnec_ros.model.sam2 import ImageEncoder, Sam2Config

        sam = Sam2Config.hiera_l()
        module = ImageEncoder(sam).eval()
        image = torch.randn(1, 3, sam.image_size, sam.image_size)
        tokens = (sam.image_size // 4) ** 2  # Hiera's first stage: stride-4 patches

        def run() -> Any:
            return module(image)
    else:
        raise ValueError(f"unknown component {component!r}")
    weights = sum(p.numel() * p.element_size() for p in module.parameters()) / (1 << 20)
    before = rss_mb(os.getpid())
    with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    with torch.inference_mode():
        run()
    peak = rss_mb(os.getpid(), "VmHWM")
    return {"component": component, "layers": layers, "tokens": tokens, "weights_mb": weights,
            "rss_before_mb": before, "peak_mb": peak - before}


def _measure(component: str, width: int, height: int, layers: int, timeout_s: float) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "rynnec_ros.bench.activation_bench", component, str(width), str(height),
         str(layers)],
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"activation peak of {component} failed:\n{proc.stderr[-2000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def activation_peaks(width: int, height: int, depths: tuple[int, int] = (1, 6),
                     timeout_s: float = 900.0) -> dict[str, Any]:
    """The vision tower at two depths and SAM 2's image encoder, each in its own process."""
    vision = [_measure("vision", width, height, d, timeout_s) for d in depths]
    sam2 = _measure("sam2", width, height, 0, timeout_s)
    return {
        "available": True,
        "frame_size_wh": [width, height],
        "vision": vision,
        "vision_peak_mb": max(v["peak_mb"] for v in vision),
        "vision_peak_bytes_per_token": max(v["peak_mb"] for v in vision) * (1 << 20) / vision[0]["tokens"],
        "sam2": sam2,
        "sam2_peak_mb": sam2["peak_mb"],
        "method": (
            "one fresh interpreter per module: random float32 weights at the released sizes, input "
            "prepared, RSS recorded, VmHWM reset, one forward pass under inference_mode; peak_mb = VmHWM - "
            "that RSS. Vision: one frame of frame_size_wh through the engine's preprocessing, the first "
            "`layers` of 27 layers (the peak does not grow with depth: compare the two depths). SAM 2: "
            "Hiera-L + FPN on one 1024x1024 image."
        ),
    }


if __name__ == "__main__":
    name, w, h, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(_child(name, w, h, n)))

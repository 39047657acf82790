"""Frame preprocessing and prompt construction exactly as upstream (image processor, ``mm_infer``).

Each video frame is an independent image (t = 1): it is resized under a visual-token budget shared by all
frames of the window, normalised, and cut into 14-px patches ordered in 2×2 merge blocks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rynnec_ros.core.types import RequestError

from .config import IMAGE_TOKEN, ProcessorConfig
from .resize import resize_bicubic


@dataclass
class FrameInput:
    """One preprocessed frame: patches [h·w, 3·p·p] in merge-block order and its patch grid."""

    pixel_values: np.ndarray
    grid_h: int
    grid_w: int
    resized: np.ndarray  # uint8 H'×W'×3 after the PIL resize (kept for checks)


def target_size(
    height: int, width: int, num_images: int, cfg: ProcessorConfig, merge: int
) -> tuple[int, int]:
    """Resized (h, w) in pixels: multiples of patch·merge, total pixels within the shared token budget.

    Python ``round`` (half to even) is used on purpose: it is what upstream does.
    """
    factor = cfg.patch_size * merge
    max_pixels = cfg.max_tokens * factor**2 // num_images
    min_pixels = cfg.min_tokens * factor**2
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        # upstream would produce a 0-px side for extreme aspect ratios and fail; keep one row/column
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    if h <= 0 or w <= 0:
        raise RequestError(f"frame of {width}×{height} px cannot be resized to a {factor}-px grid")
    return h, w


def check_frame(frame: np.ndarray, index: int) -> None:
    if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        desc = getattr(frame, "shape", type(frame).__name__), getattr(frame, "dtype", "")
        raise RequestError(f"frame {index} must be an H×W×3 uint8 RGB array, got {desc}")
    if frame.shape[0] < 1 or frame.shape[1] < 1:
        raise RequestError(f"frame {index} is empty ({frame.shape})")


def preprocess_frame(frame: np.ndarray, num_images: int, cfg: ProcessorConfig, merge: int) -> FrameInput:
    h, w = target_size(frame.shape[0], frame.shape[1], num_images, cfg, merge)
    if cfg.resample != 3:
        raise RequestError(
            f"only bicubic resampling (3) is supported, the processor config says {cfg.resample}"
        )
    resized = resize_bicubic(frame, w, h)
    x = (resized.astype(np.float64) * cfg.rescale_factor).astype(np.float32)
    mean = np.asarray(cfg.image_mean, dtype=np.float32)
    std = np.asarray(cfg.image_std, dtype=np.float32)
    x = ((x - mean) / std).transpose(2, 0, 1)  # CHW
    p = cfg.patch_size
    gh, gw = h // p, w // p
    patches = x.reshape(1, 3, gh // merge, merge, p, gw // merge, merge, p)
    patches = patches.transpose(0, 2, 5, 3, 6, 1, 4, 7).reshape(gh * gw, 3 * p * p)
    return FrameInput(np.ascontiguousarray(patches, dtype=np.float32), gh, gw, resized)


def build_prompt(num_frames: int, question: str) -> tuple[str, str]:
    """(prefix, full prompt) of the upstream inference template: no system prompt, no assistant header.

    ``mm_infer`` splits the instruction on ``<video>`` and strips the pieces; the frames go where
    ``<video>`` was (first when absent). The prefix is everything before the question text, the part
    that is identical for every question on the same window.
    """
    video = ",".join([IMAGE_TOKEN] * num_frames) + "\n"
    if "<video>" in question:
        before, after = question.split("<video>", 1)
        if "<video>" in after:
            raise RequestError("the question may contain <video> at most once")
        before, after = before.strip(), after.strip()
    else:
        before, after = "", question.strip()
    head = "<|im_start|>user\n"
    prefix = head + before + video
    return prefix, prefix + after + "<|im_end|>\n"


def expand_image_tokens(
    ids: Sequence[int], image_token_id: int, tokens_per_frame: Sequence[int]
) -> list[int]:
    """Replace the k-th ``<image>`` id by ``tokens_per_frame[k]`` copies."""
    out: list[int] = []
    k = 0
    for t in ids:
        if t == image_token_id:
            if k >= len(tokens_per_frame):
                raise RequestError("more <image> tokens in the prompt than frames")
            out.extend([image_token_id] * tokens_per_frame[k])
            k += 1
        else:
            out.append(t)
    if k != len(tokens_per_frame):
        raise RequestError(f"prompt has {k} <image> tokens for {len(tokens_per_frame)} frames")
    return out


def region_question(question: str, object_mask_counts: Sequence[int], region_token: str) -> str:
    """Insert the RynnEC ``[<REGION>…]`` idiom for objects referred to as ``<object0>``, ``<object1>``, …

    Conventions from the upstream notebooks/benchmark: a question holding ``<REGION>`` is used as is;
    ``<region>`` placeholders (RynnEC-Bench) are replaced in order; otherwise the objects are introduced
    up front (``There are N objects in the video: <object0>[<REGION>], …``), or for a single object
    its first ``<object0>`` mention becomes ``[<REGION>]``.
    """
    n = len(object_mask_counts)
    if region_token in question:
        return question
    refs = sorted({int(k) for k in re.findall(r"<object(\d+)>", question)})
    if refs and refs[-1] >= n:
        raise RequestError(
            f"question refers to <object{refs[-1]}> but masks were given for {n} object(s) "
            "(<objectK> names the K-th object of the request, counting from 0)"
        )
    if n == 0:
        return question
    idioms = ["[" + region_token * c + "]" for c in object_mask_counts]
    if "<region>" in question:
        if question.count("<region>") != n:
            raise RequestError(
                f"question has {question.count('<region>')} <region> placeholders for {n} objects"
            )
        for idiom in idioms:
            question = question.replace("<region>", idiom, 1)
        return question
    if n == 1 and "<object0>" in question:
        return question.replace("<object0>", idioms[0], 1)
    intro = ", ".join(f"<object{k}>{idioms[k]}" for k in range(n))
    noun = "object" if n == 1 else "objects"
    verb = "is" if n == 1 else "are"
    return f"There {verb} {n} {noun} in the video: {intro}. {question.strip()}"

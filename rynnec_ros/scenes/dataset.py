"""The spatial QA JSON format (``questions.json`` / ``masks.json``) and its conversion to ``Request``s.

Format ``rynnec_ros.spatial_qa/1`` (documented in docs/spatial.md)::

    {"format": "rynnec_ros.spatial_qa/1", "bag": "bag", "arm_length_m": 0.8, "source": "scene_model",
     "questions": [{"id": "s0-q0001", "task": "distance_to_camera",
                    "question": "How far is <object0> from you?",
                    "frames": [<stamp_ns>, ...],                 # the window, ascending; me = last frame
                    "objects": [{"object_id": 3, "label": "table",
                                 "masks": {"<stamp_ns>": {"size": [h, w], "counts": "<COCO RLE>"}}}],
                    "answer": "<object0> is 2.31 meters away from me.", "value": 2.31, "unit": "m",
                    "options": ["Yes", "No"] | null, "answer_index": int | null}]}

``answer_index`` indexes ``objects`` for choice tasks and ``options`` for yes/no tasks.
``masks.json`` holds ``{"format": "rynnec_ros.spatial_masks/1", "objects": [<object entries as above>]}``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rynnec_ros.core import masks as rle_codec
from rynnec_ros.core.types import Frame, Region, Request

QA_FORMAT = "rynnec_ros.spatial_qa/1"
MASKS_FORMAT = "rynnec_ros.spatial_masks/1"


def load_json(path: Path | str, expected_format: str) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {p}: {exc}") from exc
    if data.get("format") != expected_format:
        raise ValueError(f"{p} is not {expected_format} (format={data.get('format')!r})")
    return data


def save_json(path: Path | str, data: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(data, indent=1))


def build_request(question: dict[str, Any], frames_by_stamp: dict[int, Frame], use_task: bool) -> Request:
    """Request for one question: its window of frames and its objects' masks on those frames."""
    stamps = [int(s) for s in question["frames"]]
    missing = [s for s in stamps if s not in frames_by_stamp]
    if missing:
        raise ValueError(f"question {question.get('id')}: frames {missing[:3]} are not in the bag")
    index = {s: i for i, s in enumerate(stamps)}
    regions = []
    for obj in question.get("objects", []):
        masks = {}
        for stamp, rle in obj["masks"].items():
            if int(stamp) in index:
                masks[index[int(stamp)]] = rle_codec.decode(rle)
        regions.append(Region(object_id=int(obj["object_id"]), masks=masks, label=obj.get("label", "")))
    return Request(
        question=question["question"],
        frames=[frames_by_stamp[s] for s in stamps],
        regions=regions,
        options=question.get("options"),
        task=(question.get("structured") or question["task"]) if use_task else None,
    )

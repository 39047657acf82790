"""Loaders for the released benchmark files (formats and assumptions documented in docs/eval.md).

Items keep file references, not pixels: frames and masks are decoded when an item is run, so a
resumed run over thousands of items starts instantly and memory stays flat.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rynnec_ros.core import masks as rle_codec

RYNNEC_SUBSETS = ("object_cognition", "object_segmentation", "spatial_cognition")


def load_image(path: Path) -> np.ndarray:
    from PIL import Image

    if not path.is_file():
        raise ValueError(f"image {path} does not exist")
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


def decode_image_b64(data: str) -> np.ndarray:
    from PIL import Image

    try:
        raw = base64.b64decode(data, validate=False)
        with Image.open(io.BytesIO(raw)) as im:
            return np.asarray(im.convert("RGB"), dtype=np.uint8)
    except (ValueError, OSError) as exc:
        raise ValueError(f"image field is neither a file nor base64 image data ({exc})") from exc


def decode_rle(rle: dict, height: int | None = None, width: int | None = None) -> np.ndarray:
    """COCO RLE (compressed string or uncompressed list ``counts``) → bool H×W mask; an RLE without
    ``size`` takes the item's ``height``/``width``."""
    if not isinstance(rle, dict) or "counts" not in rle:
        raise ValueError(f"mask is not a COCO RLE dict with 'counts': {str(rle)[:80]}")
    size = rle.get("size") or ([height, width] if height and width else None)
    if size is None:
        raise ValueError("RLE mask has no 'size' and the item gives no height/width")
    return rle_codec.decode({"size": [int(size[0]), int(size[1])], "counts": rle["counts"]})


def _read_json_list(path: Path) -> list[dict]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(data, list):
        raise ValueError(f"{path} must hold a JSON list of items, got {type(data).__name__}")
    return data


# ----------------------------------------------------------------------------------------------------
# RynnEC-Bench


@dataclass
class RegionMask:
    object_index: int
    frame_index: int
    rle: dict


@dataclass
class RynnECItem:
    key: str
    subset: str
    video_id: str
    frame_paths: list[Path]
    question: str
    answer: str | None
    type: str
    class_name: str | None
    masks: list[RegionMask]
    height: int | None = None
    width: int | None = None

    @property
    def mask_frame_indices(self) -> list[int]:
        return [m.frame_index for m in self.masks]

    def load_frames(self) -> list[np.ndarray]:
        return [load_image(p) for p in self.frame_paths]

    def decode_masks(self) -> list[np.ndarray]:
        return [decode_rle(m.rle, self.height, self.width) for m in self.masks]


def _question_with_regions(text: str, masks_per_object: Sequence[int]) -> str:
    """Upstream prompt idiom: the k-th ``<region>`` becomes ``[<REGION>×K_k]``; ``<video>`` is dropped
    because the engine places the frames itself."""
    for n in masks_per_object:
        if "<region>" not in text:
            raise ValueError(
                f"question has fewer <region> placeholders than its {len(masks_per_object)} objects"
            )
        text = text.replace("<region>", "[" + "<REGION>" * n + "]", 1)
    return text.replace("<video>", "").strip()


def _frame_root(data_dir: Path, video_id: str, first: str) -> Path:
    for root in (data_dir, data_dir / "data", data_dir / "RynnECBench" / "data"):
        if (root / video_id / first).is_file():
            return root
    return data_dir


def load_rynnec_bench(data_dir: Path) -> dict[str, list[RynnECItem]]:
    """The three RynnEC-Bench subset files (``<subset>.json``) found under ``data_dir``."""
    data_dir = Path(data_dir)
    found = {s: data_dir / f"{s}.json" for s in RYNNEC_SUBSETS if (data_dir / f"{s}.json").is_file()}
    if not found:
        raise ValueError(
            f"no RynnEC-Bench file ({', '.join(s + '.json' for s in RYNNEC_SUBSETS)}) in {data_dir}"
        )
    out: dict[str, list[RynnECItem]] = {}
    for subset, path in found.items():
        items = []
        for i, d in enumerate(_read_json_list(path)):
            try:
                items.append(_rynnec_item(subset, i, d, data_dir))
            except (KeyError, TypeError, IndexError) as exc:
                raise ValueError(f"{path} item {i}: missing or malformed field ({exc!r})") from exc
        out[subset] = items
    return out


def _rynnec_item(subset: str, i: int, d: dict, data_dir: Path) -> RynnECItem:
    video = d["video"]
    if isinstance(video, str) or len(video) == 0:
        raise ValueError(f"{subset} item {i}: 'video' must be a non-empty list of frame files")
    video_id = str(d["video_id"])
    root = _frame_root(data_dir, video_id, video[0])
    conv = d["conversations"]
    human = next(c["value"] for c in conv if c["from"] == "human")
    gpt = next((c["value"] for c in conv if c["from"] == "gpt"), None)
    masks: list[RegionMask] = []
    per_object: list[int] = []
    mask_ids = list(d.get("mask_ids") or [])
    flat = 0
    for obj, ann in enumerate(d.get("masks") or []):
        if isinstance(ann, str):
            raise ValueError(f"{subset} item {i}: masks stored in a separate file are not supported")
        for key in ann:
            if flat >= len(mask_ids):
                raise ValueError(f"{subset} item {i}: more masks than mask_ids")
            fi = int(mask_ids[flat])
            if not 0 <= fi < len(video):
                raise ValueError(f"{subset} item {i}: mask_id {fi} outside its {len(video)} frames")
            masks.append(RegionMask(obj, fi, ann[key]))
            flat += 1
        per_object.append(len(ann))
    type_ = d.get("type", "counting")
    type_ = type_[0] if isinstance(type_, list) else type_
    question = human
    if subset != "object_segmentation" and masks and "<region>" in human:
        question = _question_with_regions(human, per_object)
    else:
        question = human.replace("<video>", "").strip()
    return RynnECItem(
        key=f"{subset}/{i}",
        subset=subset,
        video_id=video_id,
        frame_paths=[root / video_id / f for f in video],
        question=question,
        answer=gpt,
        type=str(type_) if subset == "object_segmentation" else str(type_).lower(),
        class_name=(str(d["class_name"]).replace(".", "") if d.get("class_name") else None),
        masks=masks,
        height=d.get("height"),
        width=d.get("width"),
    )


# ----------------------------------------------------------------------------------------------------
# EmbSpatial-Bench

_SOURCES = {
    "mp3d": "MP3D",
    "matterport": "MP3D",
    "ai2thor": "AI2-THOR",
    "ai2_thor": "AI2-THOR",
    "scannet": "ScanNet",
}


@dataclass
class EmbSpatialItem:
    key: str
    question: str
    options: list[str]
    answer: int
    relation: str
    source: str
    image: str
    base_dir: Path

    def load_frames(self) -> list[np.ndarray]:
        path = self.base_dir / self.image
        if len(self.image) < 512 and path.is_file():
            return [load_image(path)]
        return [decode_image_b64(self.image)]


def _source_of(d: dict) -> str:
    raw = str(d.get("data_source") or d.get("source") or d.get("question_id", "")).lower()
    for prefix, name in _SOURCES.items():
        if raw.startswith(prefix) or prefix in raw.replace("-", "_"):
            return name
    return "unknown"


def load_embspatial(path: Path) -> list[EmbSpatialItem]:
    """``embspatial_bench.json``: a list of {question_id, question, answer_options, answer, relation, image}.

    ``data`` may be that file or its folder.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "embspatial_bench.json"
    if not path.is_file():
        raise ValueError(f"EmbSpatial-Bench file {path} not found")
    items = []
    for i, d in enumerate(_read_json_list(path)):
        try:
            options = [str(o) for o in d["answer_options"]]
            answer = d["answer"]
            if isinstance(answer, str) and not answer.strip().isdigit():
                answer = "ABCDEF".index(answer.strip().strip("()").upper()[0])
            answer = int(answer)
            if not 0 <= answer < len(options):
                raise ValueError(f"answer index {answer} outside its {len(options)} options")
            items.append(
                EmbSpatialItem(
                    key=str(d.get("question_id", i)),
                    question=str(d["question"]),
                    options=options,
                    answer=answer,
                    relation=str(d.get("relation", "unknown")),
                    source=_source_of(d),
                    image=str(d["image"]),
                    base_dir=path.parent,
                )
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path} item {i}: missing or malformed field ({exc!r})") from exc
    return items


# ----------------------------------------------------------------------------------------------------
# RoboBench


@dataclass
class RoboBenchItem:
    """One released question; ``prompt`` is the text sent to the model (system prompt included)."""

    key: str
    kind: str  # "mc" | "q1" | "q2" | "q3"
    dimension: str
    task: str
    question: str
    gt_answer: str
    image_paths: list[Path]
    prompt: str = ""
    dag: object = None
    initial_state: list[str] = field(default_factory=list)
    system_prompt: bool = False

    def load_frames(self) -> list[np.ndarray]:
        return [load_image(p) for p in self.image_paths]


# Released dimensions answered with plans (Q1/Q2/Q3); every other dimension is multiple choice.
PLANNING_DIMENSIONS = ("1_instruction_comprehension", "3_generalized_planning")
# Released ``system_prompt.json`` keys of the multiple-choice subtasks and static attributes.
_MC_SUBTASK_PROMPTS = {
    "robot_type": "robot_type",
    "robot_view": "robot_view",
    "spatial_relation": "spatial_relation",
    "spatial_temporal_causality": "spatial_temporal_causality",
    "static_affordance": "afforadance_point",
    "dynamic_affordance": "afforadance_point",
    "navigation_visual_prompt": "afforadance_point",
    "high_level_planning_error": "high_level_planning_error",
    "low_level_execution_error": "low_level_execution_error",
}
_ATTRIBUTE_PROMPTS = {
    "is_sealed": "Sealed",
    "material": "Material",
    "contents": "Content",
    "can_contain_liquid": "Liquid",
    "transparency": "Transparency",
    "deformability": "Deformability",
    "fragility": "Fragility",
    "mass": "Mass",
}


def robobench_kind(record_id: str, gt: str, dimension: str) -> str:
    """The released split: planning dimensions by id suffix, else by the reference; others are MC."""
    if not dimension.startswith(PLANNING_DIMENSIONS) and not re.search(r"_Q[123]", record_id):
        return "mc"
    for kind in ("Q1", "Q2", "Q3"):
        if f"_{kind}" in record_id:
            return kind.lower()
    if gt.lower().strip() in ("yes", "no", "equal", "left", "right"):
        return "q3"
    return "q2" if not re.search(r"^\d+[-.)]", gt.strip()) and "\n" not in gt else "q1"


def robobench_prompt(d: dict, dimension: str, subtask: str, kind: str, prompts: dict[str, str]) -> str:
    """The model's prompt as the released loader builds it from ``system_prompt.json``.

    Planning: the skill list for the question type (``skill_list_Q1`` …, navigation's own list), the
    attribute addendum of the color/number/shape/size subtasks, "You are a <robot> robot." and the
    question. Multiple choice: the subtask's (or static attribute's) prompt, the question, ``A. …``
    option lines and ``MCQ_post_prompt``. A key the file lacks raises (the data is incomplete).
    """
    question = str(d["question"])
    if kind != "mc":
        key = "navigation_skill_list" if subtask == "navigation" else f"skill_list_{kind.upper()}"
        system = prompts[key]
        if subtask in ("color", "number", "shape", "size"):
            system += prompts[subtask]
        robot = d.get("robotic_type")
        context = ""
        if robot:
            context = f"You are a {'single-arm' if robot == 'human' else robot} robot."
        if subtask == "multi_view":
            views = [Path(str(p)).stem for p in d.get("image_urls") or []]
            context += (
                "The multiple images you have received now represent camera images from different views "
                f"at the same time. The names of these views are {views} in order."
            )
        return system + context + question
    system = ""
    rid = str(d.get("unique_id") or d.get("id") or "")
    if subtask == "static_attribute" and "/images/" in rid:
        attr = rid.split("/images/", 1)[1].split("/", 1)[0]
        if attr not in _ATTRIBUTE_PROMPTS:
            raise KeyError(f"static attribute {attr!r}")
        system = prompts[_ATTRIBUTE_PROMPTS[attr]]
    if subtask in _MC_SUBTASK_PROMPTS:
        system = prompts[_MC_SUBTASK_PROMPTS[subtask]]
    options = d.get("options") or []
    lines = "".join(f"\n{chr(ord('A') + i)}. {o}" for i, o in enumerate(options))
    return system + question + lines + prompts["MCQ_post_prompt"]


def load_robobench(data_dir: Path) -> list[RoboBenchItem]:
    """Every ``questions.json`` below ``data_dir`` (released layout ``<dimension>/<group>/<task>/``).

    Items use the released fields (``unique_id``, ``task_type``, ``options``, ``robotic_type``) or the
    older ``id`` form; prompts come from ``system_prompt.json`` at the root when it is there.
    """
    data_dir = Path(data_dir)
    files = sorted(data_dir.rglob("questions.json"))
    if not files:
        raise ValueError(f"no RoboBench questions.json below {data_dir}")
    sp_path = data_dir / "system_prompt.json"
    prompts: dict[str, str] | None = None
    if sp_path.is_file():
        raw = json.loads(sp_path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError(f"{sp_path} must hold a JSON object of prompts")
        prompts = {str(k): str(v) for k, v in raw.items()}
    items: list[RoboBenchItem] = []
    for qfile in files:
        rel = qfile.parent.relative_to(data_dir).parts
        dimension = rel[0] if rel else "robobench"
        task = "/".join(rel[1:]) if len(rel) > 1 else dimension
        dags: dict[str, object] = {}
        if (qfile.parent / "dag.json").is_file():
            dags = {str(r.get("id")): r.get("gt_dag") for r in _read_json_list(qfile.parent / "dag.json")}
        for i, d in enumerate(_read_json_list(qfile)):
            try:
                items.append(_robobench_item(d, data_dir, qfile.parent, dimension, task, dags, prompts))
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{qfile} item {i}: missing or malformed field ({exc!r})") from exc
            except ValueError as exc:
                raise ValueError(f"{qfile} item {i}: {exc}") from exc
    return items


def _robobench_item(
    d: dict,
    data_dir: Path,
    folder: Path,
    dimension: str,
    task: str,
    dags: dict[str, object],
    prompts: dict[str, str] | None,
) -> RoboBenchItem:
    rid = str(d["unique_id"] if "unique_id" in d else d["id"])
    gt = str(d["gt_answer"])
    task_type = d.get("task_type")
    if isinstance(task_type, list) and task_type:
        dimension = str(task_type[0])
    subtask = str(task_type[-1]) if isinstance(task_type, list) and task_type else Path(task).name
    kind = robobench_kind(rid, gt, dimension)
    clean = re.sub(r"_Q[123]$", "", rid)
    images = [_resolve(data_dir, folder, rid, str(p)) for p in d.get("image_urls") or []]
    if not images:
        images = [data_dir / clean / "frame_00.png"]
    prompt = str(d["question"])
    if prompts is not None:
        try:
            prompt = robobench_prompt(d, dimension, subtask, kind, prompts)
        except KeyError as exc:
            raise ValueError(f"system_prompt.json has no prompt {exc} for {rid}") from exc
    return RoboBenchItem(
        key=rid,
        kind=kind,
        dimension=dimension,
        task=task,
        question=str(d["question"]),
        gt_answer=gt,
        image_paths=images,
        prompt=prompt,
        dag=dags.get(clean, dags.get(rid)),
        initial_state=[str(s) for s in d.get("initial_state") or []],
        system_prompt=prompts is not None,
    )


def _resolve(data_dir: Path, folder: Path, rid: str, p: str) -> Path:
    """The released image layout (``<task>/images/<sample>/<name>``, or ``images/<name>`` when the name
    is the sample's), else a path relative to the data root or the task folder."""
    if "/images/" in rid:
        sample = re.sub(r"_Q[123]$", "", rid).split("/images/", 1)[1]
        released = folder / "images" / (p if Path(p).stem == Path(sample).name else f"{sample}/{p}")
        if released.is_file():
            return released
    for base in (data_dir, folder):
        if (base / p).is_file():
            return base / p
    return data_dir / p

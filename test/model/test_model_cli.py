"""``rynnec-ros make-tiny-checkpoint`` / ``infer`` and video decoding."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from rynnec_ros.cli import main
from rynnec_ros.model.video import read_video


def _write_video(path: Path, seconds: float, fps: int, size: tuple[int, int] = (96, 64)) -> None:
    import av

    w, h = size
    with av.open(str(path), mode="w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        for i in range(int(seconds * fps)):
            img = np.full((h, w, 3), (i * 10) % 255, np.uint8)
            img[:, : (i * 3) % w] = (200, 40, 40)
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def test_read_video_one_fps_and_cap(tmp_path: Path) -> None:
    video = tmp_path / "v.mp4"
    _write_video(video, seconds=4.2, fps=5)
    frames, times = read_video(video, fps=1.0, max_frames=10)
    assert times == pytest.approx([0.0, 1.0, 2.0, 3.0, 4.0])
    assert all(f.shape == (64, 96, 3) and f.dtype == np.uint8 for f in frames)
    frames, times = read_video(video, fps=1.0, max_frames=3)
    assert times == pytest.approx([0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="does not exist"):
        read_video(tmp_path / "missing.mp4")
    (tmp_path / "bad.mp4").write_bytes(b"not a video")
    with pytest.raises(ValueError, match="decode"):
        read_video(tmp_path / "bad.mp4")


def test_cli_make_checkpoint_and_infer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = tmp_path / "ck"
    assert main(["make-tiny-checkpoint", str(ck), "--seed", "3", "--untied"]) == 0
    cfg = json.loads((ck / "config.json").read_text())
    assert cfg["model_type"] == "rynnec_qwen2" and cfg["tie_word_embeddings"] is False
    capsys.readouterr()

    video = tmp_path / "v.mp4"
    _write_video(video, seconds=3.0, fps=4)
    rc = main(
        [
            "infer",
            "--checkpoint",
            str(ck),
            "--video",
            str(video),
            "--question",
            "What moves?",
            "--json",
            "--max-new-tokens",
            "5",
            "--max-frames",
            "2",
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["num_frames"] == 2 and 1 <= len(doc["token_ids"]) <= 5 and isinstance(doc["text"], str)

    frame = tmp_path / "f.png"
    Image.fromarray(np.full((64, 96, 3), 90, np.uint8)).save(frame)
    mask = tmp_path / "m.png"
    m = np.zeros((64, 96), np.uint8)
    m[10:40, 20:60] = 255
    Image.fromarray(m).save(mask)
    rc = main(
        [
            "infer",
            "--checkpoint",
            str(ck),
            "--frames",
            str(frame),
            str(frame),
            "--question",
            "What is <object0>?",
            "--mask",
            f"1:{mask}",
            "--json",
            "--max-new-tokens",
            "3",
        ]
    )
    assert rc == 0
    assert len(json.loads(capsys.readouterr().out)["token_ids"]) <= 3

    rc = main(
        ["infer", "--checkpoint", str(ck), "--frames", str(frame), "--question", "q", "--mask", f"4:{mask}"]
    )
    assert rc == 2 and "out of range" in capsys.readouterr().err


def test_cli_segment_writes_pngs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = Path(__file__).resolve().parents[1] / "data" / "rynnec-tiny" / "cases" / "a1_video_qa_224x168"
    ck = case.parents[1] / "checkpoint"
    meta = json.loads((case / "case.json").read_text())
    out = tmp_path / "masks"
    rc = main(
        [
            "infer",
            "--checkpoint",
            str(ck),
            "--frames",
            *[str(case / f) for f in meta["frame_files"]],
            "--question",
            meta["question"],
            "--segment",
            "--json",
            "--max-new-tokens",
            "12",
            "--out-dir",
            str(out),
        ]
    )
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)  # this greedy answer contains [SEG]: one mask per frame
    assert [Path(f).name for f in doc["mask_files"]] == ["mask_000.png", "mask_001.png", "mask_002.png"]
    png = np.asarray(Image.open(doc["mask_files"][0]))
    assert png.shape == (168, 224) and set(np.unique(png)) <= {0, 255}


def test_make_checkpoint_is_seeded_and_official(tmp_path: Path) -> None:
    from safetensors import safe_open

    from rynnec_ros.fixtures.checkpoints import make_checkpoint

    a = make_checkpoint(tmp_path / "a", seed=5)
    b = make_checkpoint(tmp_path / "b", seed=5)
    c = make_checkpoint(tmp_path / "c", seed=6)
    assert (a / "model.safetensors").read_bytes() == (b / "model.safetensors").read_bytes()
    assert (a / "model.safetensors").read_bytes() != (c / "model.safetensors").read_bytes()
    with safe_open(str(a / "model.safetensors"), "pt") as f:
        keys = set(f.keys())
    assert "lm_head.weight" not in keys  # tied
    for prefix in (
        "model.embed_tokens.",
        "model.layers.",
        "model.vision_encoder.vision_encoder.",
        "model.mm_projector.readout.",
        "model.region_encoder.feat_linear.",
        "model.text_hidden_fcs.0.",
        "grounding_encoder.sam2_model.image_encoder.",
        "grounding_encoder.sam2_model.sam_mask_decoder.",
        "grounding_encoder.sam2_model.memory_attention.",  # skipped by inference, loaded strictly upstream
        "grounding_encoder.sam2_model.memory_encoder.",
    ):
        assert any(k.startswith(prefix) for k in keys), prefix
    with pytest.raises(ValueError, match="unknown size"):
        make_checkpoint(tmp_path / "d", size="huge")

"""Video and image input for the CLI: frames sampled at a fixed rate like upstream ``load_video``."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def read_video(
    path: str | Path, fps: float = 1.0, max_frames: int = 128
) -> tuple[list[np.ndarray], list[float]]:
    """RGB frames (H×W×3 uint8) and their timestamps, ``fps`` frames per second, at most ``max_frames``.

    When more frames than ``max_frames`` are sampled they are thinned uniformly (``np.linspace``), as
    upstream does.
    """
    import av

    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if max_frames < 1:
        raise ValueError(f"max_frames must be >= 1, got {max_frames}")
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"video file {p} does not exist")
    frames: list[np.ndarray] = []
    times: list[float] = []
    try:
        with av.open(str(p)) as container:
            if not container.streams.video:
                raise ValueError(f"{p} has no video stream")
            stream = container.streams.video[0]
            next_t = 0.0
            for frame in container.decode(stream):
                t = (
                    float(frame.time)
                    if frame.time is not None
                    else len(times) / float(stream.average_rate or 1)
                )
                if t + 1e-9 < next_t:
                    continue
                frames.append(frame.to_ndarray(format="rgb24"))
                times.append(t)
                next_t = (int(t * fps + 1e-9) + 1) / fps
    except av.error.FFmpegError as exc:
        raise ValueError(f"cannot decode video {p}: {exc}") from exc
    if not frames:
        raise ValueError(f"no frames decoded from {p}")
    if len(frames) > max_frames:
        keep = np.linspace(0, len(frames) - 1, max_frames).round().astype(int)
        frames = [frames[i] for i in keep]
        times = [times[i] for i in keep]
    return frames, times


def read_image(path: str | Path) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except OSError as exc:
        raise ValueError(f"cannot read image {path}: {exc}") from exc


def read_mask(path: str | Path) -> np.ndarray:
    """A mask PNG as bool (pixels >= 128 of its grey level are inside)."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            return np.asarray(im.convert("L")) >= 128
    except OSError as exc:
        raise ValueError(f"cannot read mask {path}: {exc}") from exc

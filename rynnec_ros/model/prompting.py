"""Prompt building for ``engine.RynnEC``: frames preprocessed and encoded (vision features cached per frame
and patch grid), regions pooled into their embeddings, the prompt's ids and input embeddings, and the chunk
plan its prefill runs in.

The plan depends only on the prompt's layout (the text before the frames, then each frame with its
separator, then the question, each cut at ``PREFILL_CHUNK`` tokens), with or without reuse, so results
with reuse are bit-identical to results without it.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from rynnec_ros.core.types import Frame, Request, RequestError, StopFn

from .decoding import check_stop
from .engine_state import EngineState, locked
from .engine_types import Chunk, FrameFeatures, Prepared
from .heads import MaskExtractor, mask_to_grid, scrambled_grid
from .processing import (
    FrameInput,
    build_prompt,
    check_frame,
    expand_image_tokens,
    preprocess_frame,
    region_question,
    target_size,
)
from .requests import flatten_regions, frame_keys

PREFILL_CHUNK = 2048
"""Longest prefill chunk: bounds activation memory on 16K-token windows and the cancellation delay."""


class PromptBuilding(EngineState):
    """``prepare`` and the vision encoding it runs; prompted regions are resolved first by SAM 2."""

    if TYPE_CHECKING:  # segmentation.Segmenting's, which RynnEC composes with this

        def resolve_prompts(self, request: Request, *, should_stop: StopFn | None = None) -> Request: ...

    def prepare(
        self, request: Request, should_stop: StopFn | None = None, keep_inputs: bool = True
    ) -> Prepared:
        """Preprocess, encode frames (cached), build the prompt, its chunk plan and input embeddings.

        ``keep_inputs`` keeps each encoded frame's preprocessing output in ``frame_inputs`` (parity
        checks read it). The answering paths drop it as soon as the frame is encoded: float32 patches
        and the resized frame are 14 MB for a 720p frame, held for every new frame of the window.
        """
        t0 = time.perf_counter()
        frames = request.frames
        question = request.question
        if frames is None or len(frames) == 0:
            raise RequestError("at least one frame is required")
        if not isinstance(question, str):
            raise RequestError(f"question must be a string, got {type(question).__name__}")
        for i, f in enumerate(frames):
            if not isinstance(f, Frame):
                raise RequestError(f"frame {i} must be a rynnec_ros.core.types.Frame, got {type(f).__name__}")
            check_frame(f.rgb, i)
        request = self.resolve_prompts(request, should_stop=should_stop)
        keys = frame_keys(frames)
        regions = flatten_regions(frames, request.regions)

        merge = self.config.merge_size
        n = len(frames)
        feats: list[FrameFeatures | None] = []
        inputs: list[FrameInput | None] = []
        todo: list[int] = []
        p = self.processor.patch_size
        for i, f in enumerate(frames):
            h, w = target_size(f.rgb.shape[0], f.rgb.shape[1], n, self.processor, merge)
            cached = self._vision_cache.get_touch((keys[i], h // p, w // p))
            feats.append(cached)
            inputs.append(None)
            if cached is None:
                todo.append(i)
        self.stats["vision_hits"] += n - len(todo)
        t_pre = time.perf_counter() - t0
        t_vision = 0.0
        for batch in (todo[b : b + self.vision_batch] for b in range(0, len(todo), self.vision_batch)):
            check_stop(should_stop)
            t1 = time.perf_counter()
            fis = [preprocess_frame(frames[i].rgb, n, self.processor, merge) for i in batch]
            t2 = time.perf_counter()
            for i, fi, ft in zip(batch, fis, self._encode_by_grid(fis), strict=True):
                feats[i] = ft
                inputs[i] = fi if keep_inputs else None
                self._vision_cache.put((keys[i], fi.grid_h, fi.grid_w), ft)
            del fis  # float32 patches: 14 MB per 720p frame
            self.stats["vision_misses"] += len(batch)
            self._sync()
            t3 = time.perf_counter()
            t_pre += t2 - t1
            t_vision += t3 - t2
        t4 = time.perf_counter()
        ff: list[FrameFeatures] = [f for f in feats if f is not None]

        if "<video>" in question:
            before, after = question.split("<video>", 1)
            q = before + "<video>" + region_question(after, regions.counts, "<REGION>")
        else:
            q = region_question(question, regions.counts, "<REGION>")
        _, prompt = build_prompt(n, q)
        per_frame = [f.grid_h * f.grid_w // (merge * merge) for f in ff]
        image_token = self.config.image_token_id
        assert image_token is not None  # the loader refuses a checkpoint without one
        ids = expand_image_tokens(self.tokenizer.encode(prompt), image_token, per_frame)
        chunks = self._chunk_plan(ids, keys, ff)

        with torch.inference_mode():
            id_t = torch.tensor(ids, device=self.device)
            embeds = self.model.embed(id_t).clone()
            img_pos = torch.eq(id_t, image_token).nonzero().flatten()
            embeds[img_pos] = torch.cat([f.projected for f in ff]).to(embeds.dtype)
            prefix_len = max((c.end for c in chunks if c.signature is not None), default=0)
            prep = Prepared(ids, prefix_len, chunks, ff, inputs, embeds[None])
            prep.object_ids = regions.object_ids
            prep.mask_frames = regions.frames
            prep.prompted = [r for r in request.regions if r.prompts]
            if regions.masks:
                reg_pos = torch.eq(id_t, int(self.config.region_token_id or -1)).nonzero().flatten()
                if len(reg_pos) != len(regions.masks):
                    raise RequestError(
                        f"the prompt has {len(reg_pos)} <REGION> tokens "
                        f"but {len(regions.masks)} masks were given"
                    )
                self._encode_regions(prep, regions.masks, regions.frames)
                assert prep.region_embeddings is not None
                embeds[reg_pos] = prep.region_embeddings.to(embeds.dtype)
        prep.timings = {"preprocess": t_pre + (time.perf_counter() - t4), "vision": t_vision}
        return prep

    def _chunk_plan(self, ids: list[int], keys: list[Hashable], feats: list[FrameFeatures]) -> list[Chunk]:
        """Chunks: text before the frames, each frame with the separator before it, then the question.

        A chunk's signature is its text ids plus the key and grid of its frame, which is what its
        K/V depend on given equal earlier chunks; long chunks are cut at ``PREFILL_CHUNK`` tokens
        counted from their own start, so the plan of a window that gained a frame repeats the old
        plan up to the old last frame.
        """
        image = self.config.image_token_id
        runs: list[tuple[int, int]] = []
        i = 0
        while i < len(ids):
            if ids[i] == image:
                j = i
                while j < len(ids) and ids[j] == image and j - i < len(feats[len(runs)].projected):
                    j += 1
                runs.append((i, j))
                i = j
            else:
                i += 1
        pieces: list[tuple[int, int, Hashable | None]] = []
        start = 0
        if runs and runs[0][0] > 0:
            pieces.append((0, runs[0][0], ("text", tuple(ids[: runs[0][0]]))))
            start = runs[0][0]
        for k, (a, b) in enumerate(runs):
            f = feats[k]
            pieces.append((start, b, ("frame", tuple(ids[start:a]), keys[k], f.grid_h, f.grid_w)))
            start = b
        if start < len(ids):
            pieces.append((start, len(ids), None))
        chunks: list[Chunk] = []
        for a, b, sig in pieces:
            for c in range(a, b, PREFILL_CHUNK):
                sub = None if sig is None else (sig, c - a)
                chunks.append(Chunk(c, min(c + PREFILL_CHUNK, b), sub))
        return chunks

    def resized_sizes(self, height: int, width: int, counts: Sequence[int]) -> set[tuple[int, int]]:
        """The (h, w) a height×width frame is resized to in windows of each of ``counts`` frames: one size
        unless the visual-token budget binds (then every frame shrinks as the window grows, and a window
        that gained a frame shares no vision features or prefix with the one before)."""
        merge = self.config.merge_size
        return {target_size(height, width, n, self.processor, merge) for n in counts}

    def encode_frame(self, fi: FrameInput) -> FrameFeatures:
        """Vision tower + 2×2 merge + projector for one frame."""
        return self.encode_frames([fi])[0]

    def encode_frames(self, fis: Sequence[FrameInput]) -> list[FrameFeatures]:
        """Vision tower + 2×2 merge + projector for frames of one size: one tower call for all of them
        (the tower streams its weights once per call; each frame attends only to its own patches).

        The merge and projector run per frame: they are cheap, and every frame's result stays the one
        the frame-by-frame path computes (``test_model_vision_batch``).
        """
        from .vision import merge_tokens

        if not fis or len({(fi.grid_h, fi.grid_w) for fi in fis}) != 1:
            raise ValueError("encode_frames takes one or more frames of one grid size")
        merge = self.config.merge_size
        gh, gw = fis[0].grid_h, fis[0].grid_w
        out = []
        with torch.inference_mode():
            pv = torch.stack([torch.from_numpy(fi.pixel_values) for fi in fis]).to(self.device, self.dtype)
            raws = self.compute.vision_tower(pv, gh, gw, merge)
            for b in range(len(fis)):
                raw = raws[b].clone()  # its own storage: a cached frame must not pin the whole batch
                merged = merge_tokens(raw, gh, gw, merge)
                out.append(FrameFeatures(raw, self.compute.projector(merged), merged, gh, gw))
        return out

    def _encode_by_grid(self, fis: Sequence[FrameInput]) -> list[FrameFeatures]:
        """``encode_frames`` per group of equal grid (a window may mix camera sizes), in input order."""
        groups: dict[tuple[int, int], list[int]] = {}
        for i, fi in enumerate(fis):
            groups.setdefault((fi.grid_h, fi.grid_w), []).append(i)
        out: list[FrameFeatures | None] = [None] * len(fis)
        for idx in groups.values():
            for i, ft in zip(idx, self.encode_frames([fis[i] for i in idx]), strict=True):
                out[i] = ft
        return [ft for ft in out if ft is not None]

    @locked
    def encode_windows(self, windows: Sequence[Sequence[Frame]], should_stop: StopFn | None = None) -> int:
        """Encode, batched by frame size, the frames of several windows that the vision cache lacks.

        For a server whose questions from several robots arrive together: their frames then go
        through the tower in shared calls instead of one question after another, and each question
        finds its features cached. A window's frame count sets its frames' resolution, as in
        ``answer``. Returns how many frames were encoded; nothing is stored with reuse off.
        """
        if not self.reuse or self._vision_cache.capacity == 0:
            return 0
        merge, p = self.config.merge_size, self.processor.patch_size
        todo: dict[tuple[Hashable, int, int], tuple[np.ndarray, int]] = {}  # cache key -> (rgb, n)
        for window in windows:
            n = len(window)
            for i, (f, key) in enumerate(zip(window, frame_keys(window), strict=True)):
                check_frame(f.rgb, i)
                h, w = target_size(f.rgb.shape[0], f.rgb.shape[1], n, self.processor, merge)
                ck = (key, h // p, w // p)
                if ck not in self._vision_cache:
                    todo.setdefault(ck, (f.rgb, n))
        # same-grid frames side by side, so most batches are one tower call; each batch is preprocessed
        # only when it is encoded (float32 patches: 14 MB per 720p frame), as in ``prepare``
        items = sorted(todo.items(), key=lambda kv: kv[0][1:])
        for b in range(0, len(items), self.vision_batch):
            check_stop(should_stop)
            batch = items[b : b + self.vision_batch]
            fis = [preprocess_frame(rgb, n, self.processor, merge) for _, (rgb, n) in batch]
            for (ck, _), ft in zip(batch, self._encode_by_grid(fis), strict=True):
                self._vision_cache.put(ck, ft)
            self.stats["vision_misses"] += len(batch)
        self._sync()
        return len(items)

    def _encode_regions(self, prep: Prepared, masks: list[np.ndarray], frame_idx: list[int]) -> None:
        pooled = []
        for m, fi in zip(masks, frame_idx, strict=True):
            f = prep.frames[fi]
            gm = mask_to_grid(torch.from_numpy(m).to(self.device), f.grid_h, f.grid_w)
            prep.region_grid_masks.append(gm)
            pooled.append(MaskExtractor.pool(scrambled_grid(f.raw, f.grid_h, f.grid_w), gm))
        prep.region_pooled = torch.stack(pooled)
        prep.region_embeddings = self.compute.region_encoder(prep.region_pooled)

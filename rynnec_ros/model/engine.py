"""``RynnEC``: the inference engine used by the node, the CLI, the benchmarks and the evaluation harness.

It reproduces upstream ``mm_infer`` / ``mm_infer_segmentation`` and avoids recomputation across questions
on the same window of frames:

* vision features per frame (keyed by ``frame_keys`` or a hash of the frame bytes, and by the patch
  grid, which the shared token budget fixes) in a bounded LRU;
* the LLM KV cache of the prompt prefix (everything before the question text) for the last windows — each
  question works on a copy, so the stored cache is never mutated;
* SAM2 image features per frame.

The prefill is always run as two chunks (prefix, then the rest), with or without reuse, so results with
reuse are bit-identical to results without it.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..parsing import parse_option, parse_quantity
from ..types import Answer
from .config import RynnECConfig
from .heads import mask_to_grid, scrambled_grid
from .loader import load_model, parse_dtype
from .modeling import RynnecQwen2ForCausalLM
from .processing import (
    FrameInput,
    build_prompt,
    check_frame,
    expand_image_tokens,
    preprocess_frame,
    region_question,
    target_size,
)
from .tokenizer import RynnECTokenizer


def _locked(method: Callable[..., Any]) -> Callable[..., Any]:
    """Serialise public calls: the caches and the KV state are not safe to share between threads."""

    @functools.wraps(method)
    def wrapper(self: RynnEC, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper


class _TextStream:
    """Incremental detokenisation for ``on_token``: each step decodes only the ids not yet shown.

    Re-decoding the whole answer every step would be quadratic in its length. Ids are held back while
    their text ends in U+FFFD, i.e. a multi-byte UTF-8 character still split across byte tokens, and
    released together once it decodes cleanly (what transformers' ``TextStreamer`` does). Pieces
    only break at character boundaries, so they concatenate to the full decode.
    """

    def __init__(self, tokenizer: RynnECTokenizer, on_text: Callable[[str], None]) -> None:
        self.tokenizer = tokenizer
        self.on_text = on_text
        self.pending: list[int] = []

    def push(self, token_id: int) -> None:
        self.pending.append(token_id)
        text = self.tokenizer.decode(self.pending)
        if not text.endswith("\ufffd"):
            self.pending.clear()
            if text:
                self.on_text(text)

    def end(self) -> None:
        """Release what is still held back (a character cut off by the token limit)."""
        if self.pending:
            text = self.tokenizer.decode(self.pending)
            self.pending.clear()
            if text:
                self.on_text(text)


class LRU(OrderedDict):
    """A small bounded mapping; the least recently used entry goes first."""

    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def get_touch(self, key: Hashable) -> Any:
        if key not in self:
            return None
        self.move_to_end(key)
        return self[key]

    def put(self, key: Hashable, value: Any) -> None:
        if self.capacity <= 0:
            return
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


@dataclass
class FrameFeatures:
    raw: torch.Tensor  # [h·w, C] post-LN, token (merge-block) order
    projected: torch.Tensor  # [h·w/4, H] LLM embeddings in raster order of the merged grid
    merged: torch.Tensor  # [h·w/4, C]
    grid_h: int
    grid_w: int


@dataclass
class Prepared:
    """A fully built prompt: ids, embeddings and everything parity tests look at."""

    input_ids: list[int]
    prefix_len: int
    prefix_key: Hashable
    frames: list[FrameFeatures]
    frame_inputs: list[FrameInput | None]
    inputs_embeds: torch.Tensor  # [1, L, H]
    region_grid_masks: list[torch.Tensor] = field(default_factory=list)
    region_pooled: torch.Tensor | None = None
    region_embeddings: torch.Tensor | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # generate() records every step's logits and hidden state for parity checks and analysis;
    # answer()/segment() switch it off: V float32 logits per step reach GBs on long answers
    keep_steps: bool = True


@dataclass
class Generation:
    ids: list[int]
    step_logits: list[torch.Tensor]  # float32 [V] per step (raw, before any penalty); [] unless kept
    step_hidden: list[torch.Tensor]  # final-norm hidden state that produced each step's logits; ditto
    seg_hidden: list[torch.Tensor]  # the hidden states that predicted a [SEG] token (always kept)
    timings: dict[str, float]


class RynnEC:
    """RynnEC video MLLM: question answering about frames/regions, segmentation, option scoring."""

    def __init__(
        self,
        model: RynnecQwen2ForCausalLM,
        tokenizer: RynnECTokenizer,
        config: RynnECConfig,
        device: torch.device,
        dtype: torch.dtype,
        max_visual_tokens: int = 16384,
        reuse: bool = True,
        vision_cache_frames: int = 64,
        prefix_cache_windows: int = 2,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self.device = device
        self.dtype = dtype
        self.reuse = reuse
        if max_visual_tokens < config.processor.min_tokens:
            raise ValueError(
                f"max_visual_tokens {max_visual_tokens} is below the processor's min_tokens "
                f"{config.processor.min_tokens}"
            )
        self.processor = dataclasses.replace(config.processor, max_tokens=int(max_visual_tokens))
        self._lock = threading.RLock()
        self._vision_cache = LRU(vision_cache_frames if reuse else 0)
        self._prefix_cache = LRU(prefix_cache_windows if reuse else 0)
        self._sam2_cache = LRU(vision_cache_frames if reuse else 0)
        # how often each cache saved work (read by tests and benchmarks)
        self.stats = {
            "vision_hits": 0,
            "vision_misses": 0,
            "prefix_hits": 0,
            "prefix_misses": 0,
            "sam2_hits": 0,
            "sam2_misses": 0,
        }

    # ------------------------------------------------------------------------------------------ loading

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        device: str = "cpu",
        dtype: str = "float32",
        max_visual_tokens: int = 16384,
        reuse: bool = True,
    ) -> RynnEC:
        """Load a checkpoint directory in the official format (safetensors only, never the network)."""
        root = Path(path)
        if not root.is_dir():
            raise ValueError(f"checkpoint directory {root} does not exist")
        dev = torch.device(device)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError("device 'cuda' requested but CUDA is not available")
        torch_dtype = parse_dtype(dtype)
        config = RynnECConfig.from_pretrained(root)
        tokenizer = RynnECTokenizer(root)
        config.resolve_token_ids(tokenizer)
        model = load_model(root, device=dev, dtype=torch_dtype, rconfig=config)
        return cls(model, tokenizer, config, dev, torch_dtype, max_visual_tokens, reuse)

    @_locked
    def clear_cache(self) -> None:
        """Forget cached vision features, prompt-prefix KV caches and SAM2 features."""
        self._vision_cache.clear()
        self._prefix_cache.clear()
        self._sam2_cache.clear()
        for k in self.stats:
            self.stats[k] = 0

    # ------------------------------------------------------------------------------------- public API

    @_locked
    def answer(
        self,
        frames: Sequence[np.ndarray],
        question: str,
        masks: Sequence[np.ndarray] | None = None,
        mask_frame_indices: Sequence[int] | None = None,
        max_new_tokens: int = 128,
        options: Sequence[str] | None = None,
        mask_object_ids: Sequence[int] | None = None,
        on_token: Callable[[str], None] | None = None,
        frame_keys: Sequence[Hashable] | None = None,
    ) -> Answer:
        """Greedy answer to ``question`` about ``frames`` (and the objects given by ``masks``)."""
        t0 = time.perf_counter()
        prep = self.prepare(frames, question, masks, mask_frame_indices, mask_object_ids, frame_keys)
        prep.keep_steps = False
        gen = self.generate(prep, max_new_tokens, on_token=on_token)
        text = self.clean_text(self.tokenizer.decode(gen.ids))
        ans = Answer(text=text, token_ids=list(gen.ids))
        self._fill_parsed(ans, options)
        ans.frame_indices = sorted(set(mask_frame_indices or []))
        if masks:
            ids = list(mask_object_ids) if mask_object_ids is not None else list(range(len(masks)))
            ans.object_ids = list(dict.fromkeys(ids))
        ans.timings = {**prep.timings, **gen.timings, "sam2": 0.0}
        ans.timings["total"] = time.perf_counter() - t0
        return ans

    @_locked
    def segment(
        self,
        frames: Sequence[np.ndarray],
        expression: str,
        max_new_tokens: int = 64,
        on_token: Callable[[str], None] | None = None,
        frame_keys: Sequence[Hashable] | None = None,
    ) -> Answer:
        """Segment the object ``expression`` describes: one boolean mask per frame at the frame's size."""
        t0 = time.perf_counter()
        if self.model.sam2 is None or self.model.seg_head is None:
            raise ValueError(
                "this checkpoint has no SAM2 mask decoder / [SEG] head: segmentation unavailable"
            )
        prep = self.prepare(frames, expression, frame_keys=frame_keys)
        prep.keep_steps = False  # seg_embeddings() needs only Generation.seg_hidden
        gen = self.generate(prep, max_new_tokens, on_token=on_token)
        text = self.clean_text(self.tokenizer.decode(gen.ids))
        ans = Answer(text=text, token_ids=list(gen.ids))
        ans.timings = {**prep.timings, **gen.timings}
        seg = self.seg_embeddings(prep, gen)
        if seg is None:
            ans.reason = "the model produced no [SEG] token, so there is no mask"
            ans.timings["sam2"] = 0.0
        else:
            t1 = time.perf_counter()
            ans.masks, ans.mask_scores = self.masks_for(frames, seg[0], frame_keys)
            ans.frame_indices = list(range(len(frames)))
            self._sync()
            ans.timings["sam2"] = time.perf_counter() - t1
        ans.timings["total"] = time.perf_counter() - t0
        return ans

    @_locked
    def score_options(
        self,
        frames: Sequence[np.ndarray],
        question: str,
        options: Sequence[str],
        masks: Sequence[np.ndarray] | None = None,
        mask_frame_indices: Sequence[int] | None = None,
        mask_object_ids: Sequence[int] | None = None,
        frame_keys: Sequence[Hashable] | None = None,
    ) -> list[float]:
        """Summed log-likelihood of each option's tokens as the answer (EmbSpatial likelihood strategy)."""
        if not options:
            raise ValueError("score_options needs at least one option")
        prep = self.prepare(frames, question, masks, mask_frame_indices, mask_object_ids, frame_keys)
        with torch.inference_mode():
            cache, hidden = self._prefill(prep)
            first_logp = torch.log_softmax(self.model.lm_head(hidden).float(), dim=-1)
            scores = []
            for opt in options:
                ids = self.tokenizer.encode(str(opt))
                if not ids:
                    raise ValueError(f"option {opt!r} has no tokens")
                total = float(first_logp[ids[0]])
                if len(ids) > 1:
                    c = copy.deepcopy(cache)
                    emb = self.model.embed(torch.tensor([ids[:-1]], device=self.device))
                    out = self.model.model(inputs_embeds=emb, past_key_values=c, use_cache=True)
                    logp = torch.log_softmax(self.model.lm_head(out.last_hidden_state[0]).float(), dim=-1)
                    total += float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
                scores.append(total)
        return scores

    # --------------------------------------------------------------------------------------- pipeline

    def prepare(
        self,
        frames: Sequence[np.ndarray],
        question: str,
        masks: Sequence[np.ndarray] | None = None,
        mask_frame_indices: Sequence[int] | None = None,
        mask_object_ids: Sequence[int] | None = None,
        frame_keys: Sequence[Hashable] | None = None,
    ) -> Prepared:
        """Preprocess, encode frames (cached), build the prompt and its input embeddings."""
        t0 = time.perf_counter()
        if frames is None or len(frames) == 0:
            raise ValueError("at least one frame is required")
        if not isinstance(question, str):
            raise ValueError(f"question must be a string, got {type(question).__name__}")
        for i, f in enumerate(frames):
            check_frame(f, i)
        keys = self._frame_keys(frames, frame_keys)
        region_masks, region_frames, counts = self._check_regions(
            frames, masks, mask_frame_indices, mask_object_ids, keep_order="<REGION>" in question
        )

        merge = self.config.merge_size
        n = len(frames)
        feats: list[FrameFeatures | None] = []
        inputs: list[FrameInput | None] = []
        todo: list[int] = []
        for i, f in enumerate(frames):
            h, w = target_size(f.shape[0], f.shape[1], n, self.processor, merge)
            p = self.processor.patch_size
            ck = (keys[i], h // p, w // p)
            cached = self._vision_cache.get_touch(ck)
            feats.append(cached)
            inputs.append(None)
            if cached is None:
                todo.append(i)
        self.stats["vision_hits"] += n - len(todo)
        self.stats["vision_misses"] += len(todo)
        for i in todo:
            inputs[i] = preprocess_frame(frames[i], n, self.processor, merge)
        t1 = time.perf_counter()
        for i in todo:
            fi = inputs[i]
            assert fi is not None
            feats[i] = self.encode_frame(fi)
            self._vision_cache.put((keys[i], fi.grid_h, fi.grid_w), feats[i])
        self._sync()
        t2 = time.perf_counter()
        ff: list[FrameFeatures] = [f for f in feats if f is not None]

        # prompt
        if "<video>" in question:
            before, after = question.split("<video>", 1)
            q = before + "<video>" + region_question(after, counts, "<REGION>")
        else:
            q = region_question(question, counts, "<REGION>")
        prefix_text, prompt = build_prompt(n, q)
        per_frame = [f.grid_h * f.grid_w // (merge * merge) for f in ff]
        ids = expand_image_tokens(self.tokenizer.encode(prompt), self.config.image_token_id, per_frame)
        prefix_ids = expand_image_tokens(
            self.tokenizer.encode(prefix_text), self.config.image_token_id, per_frame
        )
        prefix_len = (
            len(prefix_ids) if ids[: len(prefix_ids)] == prefix_ids and len(prefix_ids) < len(ids) else 0
        )
        prefix_key = (tuple(keys), tuple((f.grid_h, f.grid_w) for f in ff), tuple(ids[:prefix_len]))

        with torch.inference_mode():
            id_t = torch.tensor(ids, device=self.device)
            embeds = self.model.embed(id_t).clone()
            img_pos = (id_t == self.config.image_token_id).nonzero().flatten()
            embeds[img_pos] = torch.cat([f.projected for f in ff]).to(embeds.dtype)
            prep = Prepared(ids, prefix_len, prefix_key, ff, inputs, embeds[None])
            if region_masks:
                reg_pos = (id_t == self.config.region_token_id).nonzero().flatten()
                if len(reg_pos) != len(region_masks):
                    raise ValueError(
                        f"the prompt has {len(reg_pos)} <REGION> tokens "
                        f"but {len(region_masks)} masks were given"
                    )
                self._encode_regions(prep, region_masks, region_frames)
                assert prep.region_embeddings is not None
                embeds[reg_pos] = prep.region_embeddings.to(embeds.dtype)
        t3 = time.perf_counter()
        prep.timings = {"preprocess": (t1 - t0) + (t3 - t2), "vision": t2 - t1}
        return prep

    def encode_frame(self, fi: FrameInput) -> FrameFeatures:
        """Vision tower + 2×2 merge + projector for one frame."""
        from .vision import merge_tokens

        merge = self.config.merge_size
        with torch.inference_mode():
            pv = torch.from_numpy(fi.pixel_values).to(self.device, self.dtype)
            raw = self.model.vision_tower(pv, fi.grid_h, fi.grid_w, merge)
            merged = merge_tokens(raw, fi.grid_h, fi.grid_w, merge)
            projected = self.model.model.mm_projector(merged)
        return FrameFeatures(raw, projected, merged, fi.grid_h, fi.grid_w)

    def _encode_regions(self, prep: Prepared, masks: list[np.ndarray], frame_idx: list[int]) -> None:
        pooled = []
        for m, fi in zip(masks, frame_idx, strict=True):
            f = prep.frames[fi]
            gm = mask_to_grid(torch.from_numpy(m).to(self.device), f.grid_h, f.grid_w)
            prep.region_grid_masks.append(gm)
            pooled.append(self.model.model.region_encoder.pool(scrambled_grid(f.raw, f.grid_h, f.grid_w), gm))
        prep.region_pooled = torch.stack(pooled)
        prep.region_embeddings = self.model.model.region_encoder(prep.region_pooled)

    def _prefill(self, prep: Prepared) -> tuple[Any, torch.Tensor]:
        """KV cache and final hidden state of the last prompt position (prefix from the cache if possible)."""
        from transformers import DynamicCache

        p = prep.prefix_len
        llm = self.model.model
        cached = self._prefix_cache.get_touch(prep.prefix_key) if p > 0 else None
        if cached is not None:
            self.stats["prefix_hits"] += 1
            cache = copy.deepcopy(cached)
        else:
            self.stats["prefix_misses"] += int(p > 0)
            cache = DynamicCache(config=self.model.config)
            if p > 0:
                llm(inputs_embeds=prep.inputs_embeds[:, :p], past_key_values=cache, use_cache=True)
                if self.reuse:
                    self._prefix_cache.put(prep.prefix_key, copy.deepcopy(cache))
        out = llm(inputs_embeds=prep.inputs_embeds[:, p:], past_key_values=cache, use_cache=True)
        return cache, out.last_hidden_state[0, -1]

    def generate(
        self,
        prep: Prepared,
        max_new_tokens: int,
        on_token: Callable[[str], None] | None = None,
        force_ids: Sequence[int] | None = None,
    ) -> Generation:
        """Greedy decoding with a KV cache until an eos id (included) or ``max_new_tokens``.

        ``force_ids`` feeds a fixed continuation instead of the argmax (teacher forcing); it is how the
        segmentation references were produced. Each step's raw logits and hidden state are recorded
        only when ``prep.keep_steps`` is set; the hidden states that predict [SEG] always are.
        """
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        t0 = time.perf_counter()
        eos = set(self.config.eos_token_ids)
        seg_id = self.config.seg_token_id
        penalty = self.config.repetition_penalty
        ids: list[int] = []
        step_logits: list[torch.Tensor] = []
        step_hidden: list[torch.Tensor] = []
        seg_hidden: list[torch.Tensor] = []
        stream = _TextStream(self.tokenizer, on_token) if on_token is not None else None
        steps = max_new_tokens if force_ids is None else len(force_ids)
        with torch.inference_mode():
            cache, hidden = self._prefill(prep)
            self._sync()
            t1 = time.perf_counter()
            for step in range(steps):
                logits = self.model.lm_head(hidden).float()
                if prep.keep_steps:
                    step_logits.append(logits)
                    step_hidden.append(hidden)
                if force_ids is not None:
                    nxt = int(force_ids[step])
                else:
                    scores = logits
                    if penalty != 1.0 and ids:
                        scores = logits.clone()
                        prev = torch.tensor(sorted(set(ids)), device=logits.device)
                        s = scores[prev]
                        scores[prev] = torch.where(s < 0, s * penalty, s / penalty)
                    nxt = int(torch.argmax(scores))
                ids.append(nxt)
                if nxt == seg_id:
                    seg_hidden.append(hidden.clone())  # a view would pin the whole prefill output
                if stream is not None:
                    stream.push(nxt)
                if nxt in eos or step == steps - 1:
                    break
                emb = self.model.embed(torch.tensor([[nxt]], device=self.device))
                out = self.model.model(inputs_embeds=emb, past_key_values=cache, use_cache=True)
                hidden = out.last_hidden_state[0, -1]
            self._sync()
            if stream is not None:
                stream.end()
        t2 = time.perf_counter()
        timings = {"prefill": t1 - t0, "decode": t2 - t1}
        return Generation(ids, step_logits, step_hidden, seg_hidden, timings)

    def seg_embeddings(self, prep: Prepared, gen: Generation) -> torch.Tensor | None:
        """[n_seg, out_dim] SAM2 prompts: hidden state that *predicted* each [SEG] → text_hidden_fcs."""
        head = self.model.seg_head
        if head is None or not gen.seg_hidden:
            return None
        with torch.inference_mode():
            return head(torch.stack(gen.seg_hidden)).float()

    def masks_for(
        self, frames: Sequence[np.ndarray], seg: torch.Tensor, frame_keys: Sequence[Hashable] | None = None
    ) -> tuple[list[np.ndarray | None], list[float]]:
        """Per-frame SAM2 masks (bool, at each frame's own size) and IoU predictions for one [SEG] prompt."""
        keys = self._frame_keys(frames, frame_keys)
        masks: list[np.ndarray | None] = []
        scores: list[float] = []
        for frame, key in zip(frames, keys, strict=True):
            dec = self.sam2_decode(frame, key, seg)
            masks.append(self._mask_to_frame(dec.mask_1024, frame.shape[0], frame.shape[1]))
            scores.append(float(dec.iou[dec.best_index]))
        return masks, scores

    def sam2_decode(self, frame: np.ndarray, key: Hashable, seg: torch.Tensor) -> Any:
        sam2 = self.model.sam2
        if sam2 is None:
            raise ValueError("this checkpoint has no SAM2 mask decoder")
        feats = self._sam2_cache.get_touch(key)
        self.stats["sam2_hits" if feats is not None else "sam2_misses"] += 1
        if feats is None:
            feats = sam2.image_features(sam2.preprocess(frame))
            self._sam2_cache.put(key, feats)
        return sam2.decode(feats, seg)

    # ---------------------------------------------------------------------------------------- helpers

    @staticmethod
    def _mask_to_frame(mask_1024: torch.Tensor, height: int, width: int) -> np.ndarray:
        from .sam2 import resize_mask_to_frame

        return resize_mask_to_frame(mask_1024, int(height), int(width))

    @staticmethod
    def clean_text(text: str) -> str:
        """Strip whitespace and a leading ``assistant`` header (training-format echo)."""
        t = text.strip()
        if t.startswith("assistant\n"):
            t = t[len("assistant\n") :].strip()
        return t

    @staticmethod
    def _fill_parsed(ans: Answer, options: Sequence[str] | None) -> None:
        q = parse_quantity(ans.text)
        if q is not None:
            ans.value, ans.unit = q
        if options:
            ans.option_index = parse_option(ans.text, list(options))

    def _frame_keys(
        self, frames: Sequence[np.ndarray], frame_keys: Sequence[Hashable] | None
    ) -> list[Hashable]:
        if frame_keys is not None:
            if len(frame_keys) != len(frames):
                raise ValueError(f"{len(frame_keys)} frame_keys for {len(frames)} frames")
            seen: dict[Hashable, int] = {}
            for i, k in enumerate(frame_keys):
                if not isinstance(k, Hashable):
                    raise ValueError(f"frame_keys[{i}] must be hashable, got {type(k).__name__}")
                if k in seen:
                    # the cache would hand frame i the features of frame seen[k]
                    raise ValueError(
                        f"frame_keys must be unique within a call: frames {seen[k]} and {i} "
                        f"share the key {k!r}"
                    )
                seen[k] = i
            return [("key", k) for k in frame_keys]
        keys: list[Hashable] = []
        for f in frames:
            h = hashlib.blake2b(np.ascontiguousarray(f).data, digest_size=16)
            h.update(repr(f.shape).encode())
            keys.append(("hash", h.hexdigest()))
        return keys

    def _check_regions(
        self,
        frames: Sequence[np.ndarray],
        masks: Sequence[np.ndarray] | None,
        mask_frame_indices: Sequence[int] | None,
        mask_object_ids: Sequence[int] | None,
        keep_order: bool = False,
    ) -> tuple[list[np.ndarray], list[int], list[int]]:
        """Masks/frames in ``<REGION>`` order and the mask count per object.

        The engine writes the ``<REGION>`` tokens object by object; a question that already holds them
        (``keep_order``) takes the masks in the order given.

        A mask with no pixel at frame size is an error (its region token would pool nothing). A
        non-empty mask that covers no patch once reduced to the coarse grid (a tiny object, see
        ``heads.mask_to_grid``) is accepted and pools a zero vector, as upstream inference does:
        rejecting it would break parity with the reference model.
        """
        if not masks:
            if mask_frame_indices:
                raise ValueError("mask_frame_indices given without masks")
            return [], [], []
        k = len(masks)
        idx = (
            list(mask_frame_indices)
            if mask_frame_indices is not None
            else ([0] * k if len(frames) == 1 else None)
        )
        if idx is None:
            raise ValueError("mask_frame_indices is required when there are several frames")
        if len(idx) != k:
            raise ValueError(f"{k} masks but {len(idx)} mask_frame_indices")
        obj = list(mask_object_ids) if mask_object_ids is not None else list(range(k))
        if len(obj) != k:
            raise ValueError(f"{k} masks but {len(obj)} mask_object_ids")
        checked = []
        for j, (m, fi) in enumerate(zip(masks, idx, strict=True)):
            # bool is an int subclass: True would silently mean frame 1
            if isinstance(fi, (bool, np.bool_)) or not isinstance(fi, (int, np.integer)):
                raise ValueError(f"mask {j}: frame index must be an integer, got {fi!r}")
            if not 0 <= int(fi) < len(frames):
                raise ValueError(f"mask {j}: frame index {fi} out of range for {len(frames)} frames")
            m = np.asarray(m)
            if m.ndim != 2:
                raise ValueError(f"mask {j} must be a 2-D H×W array, got shape {m.shape}")
            fh, fw = frames[int(fi)].shape[:2]
            if m.shape != (fh, fw):
                raise ValueError(f"mask {j} is {m.shape[1]}×{m.shape[0]} but frame {fi} is {fw}×{fh}")
            checked.append(self._bool_mask(m, j))
        order = list(dict.fromkeys(obj))  # objects in order of first appearance = <objectN> index
        ordered = list(range(k)) if keep_order else [j for o in order for j in range(k) if obj[j] == o]
        counts = [sum(1 for x in obj if x == o) for o in order]
        return [checked[j] for j in ordered], [int(idx[j]) for j in ordered], counts

    @staticmethod
    def _bool_mask(mask: np.ndarray, j: int) -> np.ndarray:
        """Boolean mask, refusing what a plain cast would misread (soft masks, 0/255 images, empty masks)."""
        if mask.dtype != np.bool_:
            if mask.dtype.kind not in "iuf":
                raise ValueError(f"mask {j} must be boolean or numeric 0/1, got dtype {mask.dtype}")
            binary = (mask == 0) | (mask == 1)
            if not binary.all():
                bad = mask[~binary].flat[0].item()
                raise ValueError(
                    f"mask {j} is {mask.dtype} with values other than 0 and 1 (e.g. {bad!r}); "
                    "pass a boolean mask (threshold soft or 0/255 masks first)"
                )
            mask = mask.astype(bool)
        if not mask.any():
            raise ValueError(f"mask {j} is empty: it selects no pixel of its frame")
        return mask

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

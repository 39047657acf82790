"""``RynnEC``: the inference engine used by the node, the CLI, the benchmarks and the evaluation harness.

It reproduces upstream ``mm_infer`` / ``mm_infer_segmentation`` on a ``Request`` and avoids
recomputation across questions on the same window of frames:

* vision features per frame (keyed by ``Frame.key`` or a hash of the pixels, and by the patch grid,
  which the shared token budget fixes) in a bounded LRU;
* the LLM KV cache of the prompt prefix (everything up to the last frame's tokens) for the last
  windows, stored chunk by chunk so that a window which only gained frames, or whose precompute was
  interrupted, reuses what it shares with a stored one;
* SAM2 image features per frame.

The three caches share one byte budget (``cache_mb``; least recently used entries go first), so the
memory they hold is bounded whatever the checkpoint, frame size and frame count.

``precompute(frames)`` fills the first two for a live window in idle time, so a question about it pays
only the question's prefill and the decode.

The prefill runs in a fixed chunk plan that depends only on the prompt's layout (the text before the
frames, then each frame with its separator, then the question, each cut at ``PREFILL_CHUNK`` tokens),
with or without reuse, so results with reuse are bit-identical to results without it.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib.util
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import torch

from rynnec_ros.core.parsing import parse_option, parse_quantity
from rynnec_ros.core.types import (
    Answer,
    Cancelled,
    Followed,
    Frame,
    Region,
    Request,
    RequestError,
    StopFn,
    TokenFn,
)

from .caches import BudgetedLRU, CacheBudget
from .compute import Compute, TorchCompute
from .config import RynnECConfig
from .decoding import CudaGraphDecoder, Decoder, KVCache, StaticQwen2, check_stop, greedy_pick
from .heads import MaskExtractor, mask_to_grid, scrambled_grid
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
from .requests import check_prompt, flatten_regions, frame_keys
from .spec import DEFAULT_CACHE_MB, EngineInfo
from .tokenizer import RynnECTokenizer
from .tracking import Sam2Tracker, Track

PREFILL_CHUNK = 2048
"""Longest prefill chunk: bounds activation memory on 16K-token windows and the cancellation delay."""

VISION_BATCH_CUDA = 4
"""Frames per vision-tower call on CUDA, where one call over several frames fills the GPU better.

On the CPU the engine encodes frame by frame: a camera frame is already hundreds of patches, so the
tower's matrix products gain nothing from more rows, while a batch's activations overflow the caches;
batching 4 frames of 640×480 cost 8–15 % more CPU per frame (docs/acceleration.md, issue 26 item 6).
"""

_F = TypeVar("_F", bound=Callable[..., Any])
StepFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


def _locked(method: _F) -> _F:
    """Serialise public calls: the caches and the KV state are not safe to share between threads."""

    @functools.wraps(method)
    def wrapper(self: RynnEC, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


class _TextStream:
    """Incremental detokenisation for ``on_token``: each step decodes only the ids not yet shown.

    Re-decoding the whole answer every step would be quadratic in its length. Ids are held back while
    their text ends in U+FFFD, i.e. a multi-byte UTF-8 character still split across byte tokens, and
    released together once it decodes cleanly (what transformers' ``TextStreamer`` does). Pieces
    only break at character boundaries, so they concatenate to the full decode.
    """

    def __init__(self, tokenizer: RynnECTokenizer, on_text: TokenFn) -> None:
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


@dataclass
class FrameFeatures:
    raw: torch.Tensor  # [h·w, C] post-LN, token (merge-block) order
    projected: torch.Tensor  # [h·w/4, H] LLM embeddings in raster order of the merged grid
    merged: torch.Tensor  # [h·w/4, C]
    grid_h: int
    grid_w: int


@dataclass(frozen=True)
class Chunk:
    """Prompt positions [start, end) prefilled in one call; ``signature`` identifies their content.

    Prefix chunks (text before the frames, each frame with its separator) have a signature made of
    their text ids and frame keys, so equal signatures mean equal K/V; the question's chunks have
    ``None`` and are never reused.
    """

    start: int
    end: int
    signature: Hashable | None


@dataclass
class PrefixEntry:
    """Stored K/V of the first ``tokens`` positions, which are the chunks with these signatures."""

    signatures: tuple[Hashable, ...]
    tokens: int
    k: torch.Tensor
    v: torch.Tensor


@dataclass
class Prepared:
    """A fully built prompt: ids, embeddings and everything parity tests look at."""

    input_ids: list[int]
    prefix_len: int
    chunks: list[Chunk]
    frames: list[FrameFeatures]
    frame_inputs: list[FrameInput | None]
    inputs_embeds: torch.Tensor  # [1, L, H]
    region_grid_masks: list[torch.Tensor] = field(default_factory=list)
    region_pooled: torch.Tensor | None = None
    region_embeddings: torch.Tensor | None = None
    object_ids: list[int] = field(default_factory=list)
    mask_frames: list[int] = field(default_factory=list)
    prompted: list[Region] = field(default_factory=list)  # prompts and the SAM 2 masks made of them
    timings: dict[str, float] = field(default_factory=dict)
    # generate() records every step's logits and hidden state for parity checks and analysis;
    # answer()/segment() switch it off: V float32 logits per step reach GBs on long answers
    keep_steps: bool = True

    @property
    def prefix_chunks(self) -> list[Chunk]:
        return [c for c in self.chunks if c.signature is not None]


@dataclass
class Generation:
    ids: list[int]
    step_logits: list[torch.Tensor]  # float32 [V] per step (raw, before any penalty); [] unless kept
    step_hidden: list[torch.Tensor]  # final-norm hidden state that produced each step's logits; ditto
    seg_hidden: list[torch.Tensor]  # the hidden states that predicted a [SEG] token (always kept)
    timings: dict[str, float]
    logprobs: list[float]  # log-softmax of each step's raw logits at the id chosen (always kept)


@dataclass
class WindowStatus:
    """What ``precompute`` left ready for a window.

    ``complete`` is false when ``should_stop`` interrupted it; the work done is kept and the next
    call (or the question) continues from it.
    """

    frames: int
    frames_encoded: int
    prefix_tokens: int
    prefix_tokens_computed: int
    complete: bool
    seconds: float


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
        cuda_graphs: bool = True,
        cache_mb: float = DEFAULT_CACHE_MB,
        vision_batch: int | None = None,
        compute: Compute | None = None,
    ) -> None:
        self.model = model
        # what runs the networks: the checkpoint's modules, or a graph backend's (model/compute.py)
        self.compute: Compute = TorchCompute(model) if compute is None else compute
        self.tokenizer = tokenizer
        self.config = config
        self.device = device
        self.dtype = dtype
        self.reuse = reuse
        if vision_batch is None:
            vision_batch = VISION_BATCH_CUDA if device.type == "cuda" else 1
        if vision_batch < 1:
            raise ValueError(f"vision_batch must be >= 1, got {vision_batch}")
        # frames per vision-tower call (default: VISION_BATCH_CUDA on CUDA, 1 elsewhere); activations
        # and float32 patches (14 MB per 720p frame) are held for this many frames at once
        self.vision_batch = vision_batch
        # what was built (backends.load_engine names the backend and the graphs' providers)
        self.info = EngineInfo("torch")
        # CUDA graphs for the decode step (CUDA only; the same step runs eagerly otherwise)
        self.cuda_graphs = cuda_graphs and device.type == "cuda"
        if max_visual_tokens < config.processor.min_tokens:
            raise ValueError(
                f"max_visual_tokens {max_visual_tokens} is below the processor's min_tokens "
                f"{config.processor.min_tokens}"
            )
        self.processor = dataclasses.replace(config.processor, max_tokens=int(max_visual_tokens))
        self._lock = threading.RLock()
        if not cache_mb >= 0:
            raise ValueError(f"cache_mb must be >= 0, got {cache_mb}")
        # vision features, prompt-prefix K/V and SAM2 features share one byte budget (see CacheBudget)
        self.cache_budget = CacheBudget(int(cache_mb * (1 << 20)))
        self._vision_cache = BudgetedLRU(vision_cache_frames if reuse else 0, self.cache_budget)
        self._prefix_cache = BudgetedLRU(prefix_cache_windows if reuse else 0, self.cache_budget)
        self._sam2_cache = BudgetedLRU(vision_cache_frames if reuse else 0, self.cache_budget)
        self.checkpoint: Path | None = None  # the directory loaded from (tracking reads its memory tensors)
        self._tracker: Sam2Tracker | None = None
        self._kv: KVCache | None = None
        self._graph: CudaGraphDecoder | None = None
        # how often each cache saved work (read by tests and benchmarks); a prefix "hit" reused the
        # whole prefix, a "partial" some of its chunks (frames appended, interrupted precompute)
        self.stats = {
            "vision_hits": 0,
            "vision_misses": 0,
            "prefix_hits": 0,
            "prefix_partial": 0,
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
        cuda_graphs: bool = True,
        compute: Callable[[RynnecQwen2ForCausalLM], Compute] | None = None,
        cache_mb: float = DEFAULT_CACHE_MB,
        vision_cache_frames: int = 64,
        prefix_cache_windows: int = 2,
    ) -> RynnEC:
        """Load a checkpoint directory in the official format (safetensors only, never the network).

        ``compute``: builds the engine's ``Compute`` from the loaded model (a graph backend's, see
        ``backends``); with it only the host tensors are loaded (``loader.load_model(graph_backed)``).
        Without it the checkpoint's own modules compute (``TorchCompute``).
        """
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
        model = load_model(
            root, device=dev, dtype=torch_dtype, rconfig=config, graph_backed=compute is not None
        )
        engine = cls(
            model, tokenizer, config, dev, torch_dtype, max_visual_tokens, reuse, cuda_graphs=cuda_graphs,
            cache_mb=cache_mb, vision_cache_frames=vision_cache_frames,
            prefix_cache_windows=prefix_cache_windows, compute=None if compute is None else compute(model),
        )
        engine.checkpoint = root
        return engine

    def tracker(self) -> Sam2Tracker:
        """SAM 2 video propagation on this checkpoint, built on first use: the ``sam2`` package's video
        predictor around this engine's SAM 2 modules (themselves in float32, float32 copies otherwise)
        and the memory tensors, read from the checkpoint now (per-frame decoding never loads them)."""
        if self._tracker is None:
            if importlib.util.find_spec("sam2") is None:
                raise ValueError("following objects through frames needs Meta's sam2 package "
                                 "(docs/install.md, requirements-sam2.txt)")
            from .loader import SAM2_PREFIX, read_state_dict
            from .sam2 import is_ignored_key
            from .tracking import build_predictor

            sam2 = self.model.sam2
            if sam2 is None or self.checkpoint is None or self.info.backend != "torch":
                raise ValueError("tracking needs backend torch on a checkpoint with SAM 2 weights")
            shared = sam2 if sam2.no_mem_embed.dtype == torch.float32 else copy.deepcopy(sam2).float()
            def memory_part(key: str) -> bool:
                return key.startswith(SAM2_PREFIX) and is_ignored_key(key[len(SAM2_PREFIX):])

            memory, _ = read_state_dict(self.checkpoint, torch.float32, self.device, memory_part)
            self._tracker = Sam2Tracker(
                build_predictor(shared, {k[len(SAM2_PREFIX):]: v for k, v in memory.items()}), sam2.preprocess
            )
        return self._tracker

    @property
    def can_follow(self) -> bool:
        """Whether ``tracker`` can be built here: backend torch, SAM 2 weights, the sam2 package."""
        return (self.model.sam2 is not None and self.checkpoint is not None and self.info.backend == "torch"
                and importlib.util.find_spec("sam2") is not None)

    @_locked
    def follow(self, followed: Followed, frame: Frame) -> np.ndarray:
        """The followed object's mask on ``frame``, the frame after the last it was followed over (all
        false where SAM 2 lost it); its memory moves on to this frame."""
        if not isinstance(followed.state, Track):
            raise RequestError("this object was not followed by this engine's SAM 2 tracker")
        check_frame(frame.rgb, 0)
        mask = self.tracker().extend(followed.state, frame.rgb)
        followed.held_bytes = followed.state.held_bytes
        return mask

    @_locked
    def clear_cache(self) -> None:
        """Forget cached vision features, prompt-prefix KV caches and SAM2 features.

        Also drops the working KV cache and the captured decode graphs bound to it.
        """
        self._vision_cache.clear()
        self._prefix_cache.clear()
        self._sam2_cache.clear()
        self._kv = None
        self._graph = None
        for k in self.stats:
            self.stats[k] = 0

    @property
    def cache_nbytes(self) -> int:
        """Bytes the vision, prompt-prefix and SAM2 caches hold now (at most ``cache_budget.max_bytes``)."""
        return self.cache_budget.used

    @property
    def decoder(self) -> Decoder:
        """The LLM stack of ``compute``: ``StaticQwen2`` on torch, the decoder graphs on a graph backend."""
        return self.compute.decoder

    # ------------------------------------------------------------------------------------- public API

    @_locked
    def answer(
        self, request: Request, *, on_token: TokenFn | None = None, should_stop: StopFn | None = None
    ) -> Answer:
        """Greedy answer to ``request.question`` about its frames (and the objects its regions mark)."""
        t0 = time.perf_counter()
        prep = self.prepare(request, should_stop=should_stop, keep_inputs=False)
        prep.keep_steps = False
        gen = self.generate(prep, request.max_new_tokens, on_token=on_token, should_stop=should_stop)
        text = self.clean_text(self.tokenizer.decode(gen.ids))
        ans = Answer(text=text, token_ids=list(gen.ids), token_logprobs=gen.logprobs, task=request.task)
        self._fill_parsed(ans, request.options)
        ans.frame_indices = sorted(set(prep.mask_frames))
        ans.object_ids = list(prep.object_ids)
        ans.prompted = prep.prompted
        ans.timings = self._timings(prep, gen, t0)
        ans.timings["sam2"] = 0.0
        ans.timings["total"] = time.perf_counter() - t0
        return ans

    @_locked
    def segment(
        self, request: Request, *, on_token: TokenFn | None = None, should_stop: StopFn | None = None
    ) -> Answer:
        """Segment the object ``request.question`` describes: one boolean mask per frame at its size."""
        t0 = time.perf_counter()
        if self.model.sam2 is None or not self.compute.has_seg_head:
            raise RequestError(
                "this checkpoint has no SAM2 mask decoder / [SEG] head: segmentation unavailable"
            )
        if request.regions:
            raise RequestError("segment() takes no regions: the expression names the object")
        prep = self.prepare(request, should_stop=should_stop, keep_inputs=False)
        prep.keep_steps = False  # seg_embeddings() needs only Generation.seg_hidden
        gen = self.generate(prep, request.max_new_tokens, on_token=on_token, should_stop=should_stop)
        text = self.clean_text(self.tokenizer.decode(gen.ids))
        ans = Answer(text=text, token_ids=list(gen.ids), token_logprobs=gen.logprobs, task=request.task)
        ans.timings = self._timings(prep, gen, t0)
        seg = self.seg_embeddings(prep, gen)
        if seg is None:
            ans.reason = "the model produced no [SEG] token, so there is no mask"
            ans.timings["sam2"] = 0.0
        else:
            t1 = time.perf_counter()
            ans.masks, ans.mask_scores = self.masks_for(request.frames, seg[0], should_stop)
            ans.frame_indices = list(range(len(request.frames)))
            if request.window and any(m is not None and m.any() for m in ans.masks):
                seeds = {request.window_index(i): m for i, m in enumerate(ans.masks) if m is not None}
                ans.followed = self._follow_window(request.window, seeds=seeds, should_stop=should_stop)
            self._sync()
            ans.timings["sam2"] = time.perf_counter() - t1
        ans.timings["total"] = time.perf_counter() - t0
        return ans

    @_locked
    def score_options(self, request: Request, *, should_stop: StopFn | None = None) -> list[float]:
        """Summed log-likelihood of each of ``request.options`` as the answer (EmbSpatial likelihood)."""
        options = request.options
        if not options:
            raise RequestError("score_options needs at least one option")
        option_ids = [self.tokenizer.encode(str(opt)) for opt in options]
        for opt, ids in zip(options, option_ids, strict=True):
            if not ids:
                raise RequestError(f"option {opt!r} has no tokens")
        prep = self.prepare(request, should_stop=should_stop, keep_inputs=False)
        with torch.inference_mode():
            cache, hidden = self._prefill(prep, max(len(i) for i in option_ids), should_stop)
            base = cache.length
            first_logp = torch.log_softmax(self.compute.lm_head(hidden).float(), dim=-1)
            scores = []
            for ids in option_ids:
                total = float(first_logp[ids[0]])
                if len(ids) > 1:
                    cache.length = base  # every option continues the same prompt
                    emb = self.model.embed(torch.tensor([ids[:-1]], device=self.device))
                    out = self.decoder.forward(emb, cache, should_stop)
                    logp = torch.log_softmax(self.compute.lm_head(out[0]).float(), dim=-1)
                    total += float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].sum())
                scores.append(total)
        return scores

    @_locked
    def precompute(self, frames: Sequence[Frame], *, should_stop: StopFn | None = None) -> WindowStatus:
        """Make ``frames`` (a live window) answer-ready: vision features and the prompt-prefix KV cache.

        Call it in idle time with exactly the frames a question will name (the frame count sets every
        frame's resolution). Frames already cached (by ``Frame.key``) are not encoded again, and a
        window that only gained frames extends the stored prefix. ``should_stop`` interrupts it
        between frames, chunks and layers; the work done so far is kept.
        """
        t0 = time.perf_counter()
        misses = self.stats["vision_misses"]
        computed = 0
        prefix = 0
        complete = True
        try:
            prep = self.prepare(
                Request(question="", frames=list(frames)), should_stop=should_stop, keep_inputs=False
            )
            prefix = prep.prefix_len
            if self.reuse and self._prefix_cache.capacity > 0:
                with torch.inference_mode():
                    cache = self._working_cache(prefix + 1)
                    reused = self._resume_prefix(prep, cache)
                    computed = prefix - reused
                    self._run_prefix(prep, cache, should_stop)
        except Cancelled:
            complete = False
        self._sync()
        return WindowStatus(
            frames=len(frames),
            frames_encoded=self.stats["vision_misses"] - misses,
            prefix_tokens=prefix,
            prefix_tokens_computed=computed,
            complete=complete,
            seconds=time.perf_counter() - t0,
        )

    # --------------------------------------------------------------------------------------- pipeline

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

    @_locked
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

    # ------------------------------------------------------------------------------ prefill and decode

    def _working_cache(self, capacity: int) -> KVCache:
        """The engine's one K/V buffer, reallocated (in 4096-position steps) when a prompt needs more.

        Reallocating drops the captured decode graphs, which are bound to the buffer.
        """
        if self._kv is None or self._kv.capacity < capacity:
            self._kv = self.decoder.new_cache(-(-capacity // 4096) * 4096)
            self._graph = None
        return self._kv

    def _resume_prefix(self, prep: Prepared, cache: KVCache) -> int:
        """Load the longest stored run of this prompt's prefix chunks into ``cache``; its token count."""
        sigs = [c.signature for c in prep.prefix_chunks]
        best: PrefixEntry | None = None
        best_n = 0
        for entry in list(self._prefix_cache.values()):
            n = 0
            for a, b in zip(entry.signatures, sigs, strict=False):
                if a != b:
                    break
                n += 1
            if n > best_n:
                best, best_n = entry, n
        if best is None:
            cache.length = 0
            self.stats["prefix_misses"] += int(bool(sigs))
            return 0
        tokens = prep.prefix_chunks[best_n - 1].end
        self._prefix_cache.get_touch(best.signatures)
        cache.load(best.k[:, :, :tokens], best.v[:, :, :tokens])
        self.stats["prefix_hits" if best_n == len(sigs) else "prefix_partial"] += 1
        return tokens

    def _store_prefix(self, prep: Prepared, cache: KVCache, done: int) -> None:
        """Keep the first ``done`` prefix chunks' K/V; stored runs this one extends are dropped."""
        if not self.reuse or done == 0:
            return
        sigs = tuple(c.signature for c in prep.prefix_chunks[:done])
        if sigs in self._prefix_cache:
            self._prefix_cache.get_touch(sigs)
            return
        for key in [k for k in self._prefix_cache if k == sigs[: len(k)]]:
            del self._prefix_cache[key]
        tokens = prep.prefix_chunks[done - 1].end
        k, v = cache.snapshot(tokens)
        self._prefix_cache.put(sigs, PrefixEntry(sigs, tokens, k, v))

    def _run_prefix(self, prep: Prepared, cache: KVCache, should_stop: StopFn | None) -> torch.Tensor | None:
        """Prefill the prefix chunks after ``cache.length``; stores the result, even when interrupted."""
        chunks = prep.prefix_chunks
        done = sum(1 for c in chunks if c.end <= cache.length)
        start_done = done
        hidden = None
        try:
            for c in chunks[done:]:
                hidden = self.decoder.forward(prep.inputs_embeds[:, c.start : c.end], cache, should_stop)
                done += 1
        finally:
            if done > start_done:
                self._store_prefix(prep, cache, done)
        return hidden

    def _prefill(
        self, prep: Prepared, extra: int, should_stop: StopFn | None
    ) -> tuple[KVCache, torch.Tensor]:
        """K/V cache and final hidden state of the last prompt position, chunk by chunk.

        The prefix comes from the prefix cache where stored; ``extra`` positions are reserved for
        decoding.
        """
        cache = self._working_cache(len(prep.input_ids) + extra)
        self._resume_prefix(prep, cache)
        hidden = self._run_prefix(prep, cache, should_stop)
        for c in prep.chunks:
            if c.signature is None:
                hidden = self.decoder.forward(prep.inputs_embeds[:, c.start : c.end], cache, should_stop)
        # the template puts "<|im_end|>\n" after the last frame, so a question chunk always runs
        assert hidden is not None
        return cache, hidden[0, -1]

    def _step_fn(self, cache: KVCache, vocab: int) -> tuple[StepFn, torch.Tensor]:
        """One decode step ``token [1] -> (hidden [H], logits [V] float32)`` at ``cache.length``, and
        the ``seen`` mask [V] of the tokens fed so far (which the step updates, for the penalty).

        On CUDA it replays a captured graph (the step's K/V write, position and ``seen`` update all on
        device; its outputs are overwritten by the next step); elsewhere it runs the same
        ``decode_step`` eagerly over exactly the cached positions.
        """
        penalty = self.config.repetition_penalty
        decoder = self.decoder
        if self.cuda_graphs and isinstance(decoder, StaticQwen2):
            if self._graph is None or self._graph.cache is not cache:
                self._graph = CudaGraphDecoder(decoder, self.compute.lm_head, cache, vocab, penalty)
            graph = self._graph
            graph.seen.zero_()

            def graph_step(token: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                graph.token.copy_(token)
                graph.pos.fill_(cache.length)
                graph.step(cache.length)
                cache.length += 1
                return graph.hidden, graph.logits

            return graph_step, graph.seen

        seen = torch.zeros(vocab, dtype=torch.bool, device=self.device)

        def eager_step(token: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            pos = torch.tensor([cache.length], device=self.device)
            embeds = self.model.embed(token)[None]
            hidden = decoder.decode_step(embeds, pos, cache, cache.length + 1, masked=False)
            cache.length += 1
            seen.index_fill_(0, token, True)
            return hidden, self.compute.lm_head(hidden).float()

        return eager_step, seen

    def generate(
        self,
        prep: Prepared,
        max_new_tokens: int,
        on_token: TokenFn | None = None,
        force_ids: Sequence[int] | None = None,
        should_stop: StopFn | None = None,
    ) -> Generation:
        """Greedy decoding over the static KV cache until an eos id (included) or ``max_new_tokens``.

        ``force_ids`` feeds a fixed continuation instead of the argmax (teacher forcing); it is how the
        segmentation references were produced. Each step's raw logits and hidden state are recorded
        only when ``prep.keep_steps`` is set; the hidden states that predict [SEG] always are. The
        chosen id is the only value read back from the device per token; each chosen id's log-probability
        under the raw logits (before the repetition penalty: the model's own distribution) stays on the
        device until the end.
        """
        if max_new_tokens < 1:
            raise RequestError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        t0 = time.perf_counter()
        eos = set(self.config.eos_token_ids)
        seg_id = self.config.seg_token_id
        penalty = self.config.repetition_penalty
        ids: list[int] = []
        step_logits: list[torch.Tensor] = []
        step_hidden: list[torch.Tensor] = []
        seg_hidden: list[torch.Tensor] = []
        logprobs: list[torch.Tensor] = []
        stream = _TextStream(self.tokenizer, on_token) if on_token is not None else None
        steps = max_new_tokens if force_ids is None else len(force_ids)
        first = 0.0
        with torch.inference_mode():
            cache, hidden = self._prefill(prep, steps, should_stop)
            logits = self.compute.lm_head(hidden).float()
            step, seen = self._step_fn(cache, int(logits.shape[-1]))
            self._sync()
            t1 = time.perf_counter()
            for i in range(steps):
                if prep.keep_steps:  # copies: a graph step overwrites its outputs
                    step_logits.append(logits.clone())
                    step_hidden.append(hidden.clone())
                if force_ids is not None:
                    token = torch.tensor([int(force_ids[i])], device=self.device)
                else:
                    token = greedy_pick(logits, seen, penalty)
                logprobs.append(torch.log_softmax(logits, dim=-1).gather(-1, token.reshape(-1)))
                nxt = int(token)
                if i == 0:
                    first = time.perf_counter() - t0
                ids.append(nxt)
                if nxt == seg_id:
                    seg_hidden.append(hidden.clone())  # a view would pin the step's buffers
                if stream is not None:
                    stream.push(nxt)
                if nxt in eos or i == steps - 1:
                    break
                check_stop(should_stop)
                hidden, logits = step(token)
            self._sync()
            if stream is not None:
                stream.end()
        t2 = time.perf_counter()
        timings = {"prefill": t1 - t0, "first_token": first, "decode": t2 - t1}
        return Generation(ids, step_logits, step_hidden, seg_hidden, timings, torch.cat(logprobs).tolist())

    def seg_embeddings(self, prep: Prepared, gen: Generation) -> torch.Tensor | None:
        """[n_seg, out_dim] SAM2 prompts: hidden state that *predicted* each [SEG] → text_hidden_fcs."""
        if not self.compute.has_seg_head or not gen.seg_hidden:
            return None
        with torch.inference_mode():
            return self.compute.seg_head(torch.stack(gen.seg_hidden)).float()

    def masks_for(
        self, frames: Sequence[Frame], seg: torch.Tensor, should_stop: StopFn | None = None
    ) -> tuple[list[np.ndarray | None], list[float]]:
        """Per-frame SAM2 masks (bool, at each frame's own size) and IoU predictions for one [SEG] prompt."""
        keys = frame_keys(frames)
        masks: list[np.ndarray | None] = []
        scores: list[float] = []
        for frame, key in zip(frames, keys, strict=True):
            check_stop(should_stop)
            dec = self.sam2_decode(frame.rgb, key, seg)
            masks.append(self._mask_to_frame(dec.mask_1024, frame.rgb.shape[0], frame.rgb.shape[1]))
            scores.append(float(dec.iou[dec.best_index]))
        return masks, scores

    def _sam2_features(self, frame: np.ndarray, key: Hashable) -> Any:
        """SAM 2 image features of one frame, from the cache when the frame was decoded before."""
        sam2: Any = self.model.sam2
        if sam2 is None:
            raise RequestError("this checkpoint has no SAM2 mask decoder")
        feats = self._sam2_cache.get_touch(key)
        self.stats["sam2_hits" if feats is not None else "sam2_misses"] += 1
        if feats is None:
            feats = self.compute.sam2_image_features(sam2.preprocess(frame))
            self._sam2_cache.put(key, feats)
        return feats

    def sam2_decode(self, frame: np.ndarray, key: Hashable, seg: torch.Tensor) -> Any:
        feats = self._sam2_features(frame, key)
        return self.model.sam2.decode(feats, seg, self.compute.sam2_mask_logits)  # type: ignore[union-attr]

    def resolve_prompts(self, request: Request, *, should_stop: StopFn | None = None) -> Request:
        """``request`` with every prompted region's masks made by SAM 2.

        Each prompt's frame gets the most confident of the decoder's three candidates (SAM 2's image
        predictor with ``multimask_output``), from the SAM 2 features [SEG] decoding caches too. The object
        is then followed by SAM 2's video propagation (``tracker``) from those prompted frames through
        ``request.window`` when the request has one (``Region.followed``), else through its frames when
        there are more than one (of one size) and the sam2 package is here; the region holds a mask on
        every frame it was found on. Regions that already hold masks pass unchanged.
        """
        if not any(r.unresolved for r in request.regions):
            return request
        frames = request.frames
        for i, f in enumerate(frames):
            check_frame(f.rgb, i)
        keys = frame_keys(frames)
        out: list[Region] = []
        for r, region in enumerate(request.regions):
            if not region.unresolved:
                out.append(region)
                continue
            if self.info.backend != "torch":
                raise RequestError(f"region {r}: point and box prompts need backend torch (the exported "
                                   "SAM 2 decoder takes the [SEG] prompt's three tokens only)")
            clicks: dict[int, tuple[np.ndarray, np.ndarray]] = {}
            masks: dict[int, np.ndarray] = {}
            for prompt in region.prompts:
                points, labels = check_prompt(prompt, frames, f"region {r} prompt")
                fi = int(prompt.frame)
                if fi in clicks:
                    raise RequestError(f"region {r}: two prompts on frame {fi}; give one per frame")
                clicks[fi] = (points, labels)
                rgb = frames[fi].rgb
                decoded = self.model.sam2.decode_points(  # type: ignore[union-attr]
                    self._sam2_features(rgb, keys[fi]), torch.from_numpy(points), torch.from_numpy(labels),
                    rgb.shape[0], rgb.shape[1],
                )
                masks[fi] = decoded.mask
                if not masks[fi].any():
                    raise RequestError(f"region {r}: SAM 2 found no object at the prompt on frame {fi}")
            followed = None
            if request.window:
                followed = self._follow_window(request.window, should_stop=should_stop,
                                               clicks={request.window_index(i): c for i, c in clicks.items()})
                at = {f.stamp_ns: i for i, f in enumerate(frames)}
                masks = {**{at[request.window[w].stamp_ns]: m for w, m in followed.masks.items()
                            if request.window[w].stamp_ns in at}, **masks}
            elif len(frames) > 1 and len({f.rgb.shape[:2] for f in frames}) == 1 and self.can_follow:
                masks = {**self._follow_window(frames, clicks=clicks, should_stop=should_stop).masks, **masks}
            out.append(dataclasses.replace(region, masks=dict(sorted(masks.items())), followed=followed))
        return dataclasses.replace(request, regions=out)

    def _follow_window(self, frames: Sequence[Frame], *,
                       clicks: dict[int, tuple[np.ndarray, np.ndarray]] | None = None,
                       seeds: dict[int, np.ndarray] | None = None,
                       should_stop: StopFn | None = None) -> Followed:
        """The object SAM 2 is given on some of ``frames`` (clicks, or masks) followed through all."""
        sizes = {f.rgb.shape[:2] for f in frames}
        if len(sizes) != 1:
            raise RequestError(f"following an object needs frames of one size, the window has "
                               f"{sorted(sizes)}")
        for i, f in enumerate(frames):
            check_frame(f.rgb, i)
        (h, w), = sizes
        track = self.tracker().track([f.rgb for f in frames], h, w, clicks=clicks, masks=seeds,
                                     should_stop=should_stop)
        return Followed(track.masks, track.held_bytes, track)

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

    @staticmethod
    def _timings(prep: Prepared, gen: Generation, t0: float) -> dict[str, float]:
        """Stage seconds; ``first_token`` counts from the call's start (preprocessing and vision included)."""
        before_gen = sum(prep.timings.values())
        return {**prep.timings, **gen.timings, "first_token": before_gen + gen.timings["first_token"]}

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

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

The jobs are mixins, composed here with the public API and the lock (``engine_state.locked``): prompt
building (``prompting.PromptBuilding``: ``prepare``, vision encoding, the prefill's chunk plan),
generation (``generation.Generating``: prefill with prefix reuse, greedy decoding, continuation scoring)
and segmentation glue (``segmentation.Segmenting``: [SEG] masks, point and box prompts, SAM 2 tracking).
The values they hand each other are in ``engine_types``.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from rynnec_ros.core.parsing import parse_option, parse_quantity
from rynnec_ros.core.types import Answer, Cancelled, Frame, Request, RequestError, StopFn, TokenFn

from .caches import BudgetedLRU, CacheBudget
from .compute import Compute, TorchCompute
from .config import RynnECConfig
from .engine_state import locked
from .engine_types import Generation, Prepared, WindowStatus
from .generation import Generating
from .loader import load_model, parse_dtype
from .modeling import RynnecQwen2ForCausalLM
from .prompting import PromptBuilding
from .segmentation import Segmenting
from .spec import DEFAULT_CACHE_MB, EngineInfo
from .tokenizer import RynnECTokenizer

VISION_BATCH_CUDA = 4
"""Frames per vision-tower call on CUDA, where one call over several frames fills the GPU better.

On the CPU the engine encodes frame by frame: a camera frame is already hundreds of patches, so the
tower's matrix products gain nothing from more rows, while a batch's activations overflow the caches;
batching 4 frames of 640×480 cost 8–15 % more CPU per frame (docs/acceleration.md, issue 26 item 6).
"""


class RynnEC(PromptBuilding, Generating, Segmenting):
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
        self.checkpoint = None  # the directory loaded from (tracking reads its memory tensors)
        self._tracker = None
        self._kv = None
        self._graph = None
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


    @locked
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

    # ------------------------------------------------------------------------------------- public API

    @locked
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

    @locked
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

    @locked
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
        return self.score_continuations(prep, option_ids, should_stop)

    @locked
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

    # ---------------------------------------------------------------------------------------- helpers

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

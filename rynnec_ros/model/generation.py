"""Generation for ``engine.RynnEC``: the chunked prefill (prompt-prefix K/V resumed from and stored into
the prefix cache), greedy decoding over the static KV cache, and the scoring of fixed continuations."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch

from rynnec_ros.core.types import RequestError, StopFn, TokenFn

from .decoding import CudaGraphDecoder, KVCache, StaticQwen2, check_stop, greedy_pick
from .engine_state import EngineState
from .engine_types import Generation, PrefixEntry, Prepared
from .tokenizer import RynnECTokenizer

StepFn = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


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


class Generating(EngineState):
    """``generate`` and ``score_continuations`` on a prepared prompt, and the prefill both start with."""

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


    def score_continuations(
        self, prep: Prepared, option_ids: list[list[int]], should_stop: StopFn | None
    ) -> list[float]:
        """Summed log-likelihood of each token sequence of ``option_ids`` as the continuation of ``prep``."""
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

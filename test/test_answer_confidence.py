"""Answer's token log-probability summary and ``confidence`` (issue 23, item 3), worked by hand."""

from __future__ import annotations

import math

import pytest

from rynnec_ros.core.types import Answer


def test_summary_is_the_mean_and_minimum_of_the_token_logprobs() -> None:
    # ln-probabilities -0.1, -0.3, -0.2: mean -0.2, minimum -0.3; exp(-0.2) = 0.818730753...
    ans = Answer(text="a cup", token_logprobs=[-0.1, -0.3, -0.2])
    assert ans.mean_token_logprob == pytest.approx(-0.2)
    assert ans.min_token_logprob == pytest.approx(-0.3)
    assert ans.confidence == pytest.approx(0.8187307530779818)


def test_a_response_that_carries_only_the_summary_keeps_it() -> None:
    # the ROS client builds the Answer from AskQuestion's mean/min fields, without per-token values
    ans = Answer(text="a cup", mean_token_logprob=math.log(0.5), min_token_logprob=-2.0)
    assert ans.confidence == pytest.approx(0.5) and ans.min_token_logprob == -2.0


def test_a_choice_is_as_sure_as_its_option_probability() -> None:
    ans = Answer(text="left", option_index=1, option_probabilities=[0.25, 0.75], token_logprobs=[-3.0])
    assert ans.confidence == 0.75


@pytest.mark.parametrize("ans", [
    Answer(text="1.20 m", value=1.2, unit="m", source="geometry"),  # geometry: no likelihood
    # a geometric quantity carries an uncertainty, not a probability
    Answer(text="1.20 m", value=1.2, unit="m", source="geometry", uncertainty=0.02, uncertainty_unit="m"),
    Answer(text="", mean_token_logprob=math.nan),
])
def test_no_confidence_when_nothing_carries_one(ans: Answer) -> None:
    assert ans.confidence is None


@pytest.mark.parametrize(("margin", "sigma", "expected"), [
    (0.05, 0.05, 0.8413447460685429),  # Φ(1), from a table of the standard normal
    (0.10, 0.05, 0.9772498680518208),  # Φ(2)
    (0.0, 0.05, 0.5),  # on the boundary: a coin flip
    (0.3, 0.0, 1.0),  # exact data: certain
])
def test_a_geometric_decision_is_as_sure_as_its_margin_in_standard_deviations(
    margin: float, sigma: float, expected: float
) -> None:
    ans = Answer(text="Yes.", source="geometry", margin_m=margin, uncertainty=sigma, uncertainty_unit="m")
    assert ans.confidence == pytest.approx(expected)

import pytest

from rynnec_ros.core.parsing import canonical_unit, parse_option, parse_quantity, parse_yes_no, to_metres


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cup is about 1.5 meters away.", (1.5, "m")),
        ("It is 35 cm tall", (35.0, "cm")),
        ("Around 3 o'clock", (3.0, "oclock")),
        ("Turn 90 degrees clockwise", (90.0, "deg")),
        ("There are two chairs.", (2.0, None)),
        ("Frame 3 shows it 2,5 m away", (2.5, "m")),
        ("no number here", None),
        ("The distance between <object0> and <object1> is 2", (2.0, None)),  # not the 0 of object0
        ("<object1> is 0.6m tall", (0.6, "m")),
        ("Turn -45 degrees", (-45.0, "deg")),
    ],
)
def test_parse_quantity(text: str, expected: tuple[float, str | None] | None) -> None:
    assert parse_quantity(text) == expected


def test_units() -> None:
    assert canonical_unit("Feet") == "ft"
    assert to_metres(10, "cm") == pytest.approx(0.1)
    assert to_metres(1, "ft") == pytest.approx(0.3048)
    with pytest.raises(ValueError, match="not a length unit"):
        to_metres(1, "deg")


def test_parse_option() -> None:
    options = ["left", "left of the chair", "right"]
    assert parse_option("(C) right", options) == 2
    assert parse_option("It is left of the chair.", options) == 1
    assert parse_option("B", options) == 1
    assert parse_option("nothing matches", options) is None
    assert parse_option("C: left", options) == 2
    assert parse_option("The answer is (B).", options) == 1
    assert parse_option("Answer: C", options) == 2


def test_parse_option_ignores_english_words_that_look_like_letters() -> None:
    assert parse_option("A chair.", ["table", "chair"]) == 1
    assert parse_option("A cup is on the table", ["table", "chair", "cup"]) == 2
    ten = [f"option {k}" for k in range(10)]
    assert parse_option("It is to the left. I am sure.", ten) is None
    assert parse_option("I", ten) == 8
    assert parse_option("A", []) is None


def test_parse_yes_no() -> None:
    assert parse_yes_no("Yes, the drawer is open.") is True
    assert parse_yes_no("No.") is False
    assert parse_yes_no("That is correct") is True
    assert parse_yes_no("I cannot tell") is None
    assert parse_yes_no("Nothing is left") is None  # whole words only

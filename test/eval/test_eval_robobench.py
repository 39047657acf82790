"""RoboBench scoring: plan parsing, the DAG-guided symbolic simulator, NextStep, yes/no and choices."""

import pytest

from rynnec_ros.eval.robobench import (
    Action,
    choice_correct,
    choice_letters,
    infer_initial_state,
    initial_state_candidates,
    next_step_score,
    node_correctness,
    parse_dag,
    parse_fact,
    parse_plan,
    score_plan,
    simulate,
    yes_no_correct,
)

DRAWER = parse_plan("1-open(drawer), 2-pick_up(apple), 3-place(apple, drawer), 4-close(drawer)")
DRAWER_DAG = {"edges": [[1, 3], [2, 3], [3, 4]]}


def test_parse_plan_formats() -> None:
    assert parse_plan("1-pick_up(The Apple), 2-move_to(none, red bowl)") == [
        Action("pick_up", ("apple",)),
        Action("move_to", ("none", "red_bowl")),
    ]
    dual = parse_plan("1-left:pick_up(cup), right:no_ops\n2-transfer(left, right, cup)")
    assert dual == [Action("pick_up", ("cup",), "left"), Action("transfer", ("left", "right", "cup"))]
    assert parse_plan("I would first open the drawer.") == []


def test_parse_dag() -> None:
    assert parse_dag(DRAWER_DAG, 4) == {(0, 2), (1, 2), (2, 3)}
    assert parse_dag("1 -> 3, 2 -> 3, 3 -> 4", 4) == {(0, 2), (1, 2), (2, 3)}
    assert parse_dag(None, 3) == {(0, 1), (1, 2)}  # no DAG: the reference order is strict
    with pytest.raises(ValueError, match="does not join"):
        parse_dag([[1, 9]], 4)


def test_initial_state_is_the_weakest_that_runs_the_reference() -> None:
    init = infer_initial_state(DRAWER)
    assert init == {("closed", "drawer")}
    assert all(simulate(init, DRAWER).executed)
    assert initial_state_candidates(DRAWER) == ["closed(drawer)", "open(drawer)"]


def test_reference_plan_scores_full() -> None:
    s = score_plan(DRAWER, DRAWER, DRAWER_DAG)
    assert s.milestones == ["open(drawer)", "holding(apple)", "at(apple, drawer)", "closed(drawer)"]
    assert (s.node_correctness, s.task_completion, s.score) == (1.0, 1.0, 100.0)


def test_reordering_independent_steps_keeps_full_credit() -> None:
    # open(drawer) and pick_up(apple) are both prerequisites of place, not of each other
    pred = parse_plan("pick_up(apple), open(drawer), place(apple, drawer), close(drawer)")
    s = score_plan(pred, DRAWER, DRAWER_DAG)
    assert (s.node_correctness, s.task_completion) == (1.0, 1.0)


def test_reordering_is_penalised_without_a_dag() -> None:
    pred = parse_plan("pick_up(apple), open(drawer), place(apple, drawer), close(drawer)")
    s = score_plan(pred, DRAWER, None)  # strict chain: open → pick_up → place → close
    # open(drawer) is consumed by pick_up (its only successor), which now runs before the drawer opens
    assert s.achieved == ["holding(apple)", "at(apple, drawer)", "closed(drawer)"]
    assert s.task_completion == 0.75
    late = parse_plan("pick_up(apple), place(apple, drawer), open(drawer), close(drawer)")
    s2 = score_plan(late, DRAWER, None)
    # place fails on the closed drawer; holding(apple) is then never consumed and holds at the end;
    # at(apple, drawer) is never achieved; the drawer ends closed.
    assert s2.achieved == ["holding(apple)", "closed(drawer)"]
    assert s2.task_completion == 0.5


def test_skipping_a_prerequisite() -> None:
    pred = parse_plan("pick_up(apple), place(apple, drawer), close(drawer)")
    s = score_plan(pred, DRAWER, DRAWER_DAG)
    assert s.node_correctness == 0.75  # 3 of 4 reference nodes
    # place fails on the closed drawer, so at(apple, drawer) never holds and open(drawer) is never
    # achieved; close fails too (the drawer is not open), so closed(drawer) is never achieved by the
    # plan; holding(apple) is never consumed and still holds at the end.
    assert s.achieved == ["holding(apple)"]
    assert s.task_completion == 0.25
    assert s.score == pytest.approx(50.0)
    assert any("drawer is closed" in e for e in s.errors)


def test_an_idle_plan_achieves_nothing() -> None:
    s = score_plan([], DRAWER, DRAWER_DAG)  # the drawer starts closed, but the plan did not close it
    assert (s.node_correctness, s.task_completion) == (0.0, 0.0)


def test_undoing_a_milestone_too_early() -> None:
    ref = parse_plan("turn_on(stove), pick_up(spoon), stir(spoon, soup, pot), turn_off(stove)")
    dag = "1 -> 3, 2 -> 3, 3 -> 4"
    ok = score_plan(
        parse_plan("pick_up(spoon), turn_on(stove), stir(spoon, soup, pot), turn_off(stove)"), ref, dag
    )
    assert ok.task_completion == 1.0
    # the stove is switched off before stirring: every node appears, but on(stove) does not hold when
    # stir consumes it, and the stir result is not there when turn_off (its consumer) runs
    early = parse_plan("turn_on(stove), turn_off(stove), pick_up(spoon), stir(spoon, soup, pot)")
    s = score_plan(early, ref, dag)
    assert s.node_correctness == 1.0
    assert s.achieved == ["holding(spoon)", "off(stove)"]
    assert s.task_completion == 0.5 and s.score == pytest.approx(75.0)


def test_drawer_closed_before_insertion() -> None:
    # the paper's example: an earlier opening cannot excuse closing the drawer before the apple goes in
    pred = parse_plan("open(drawer), pick_up(apple), close(drawer), place(apple, drawer)")
    s = score_plan(pred, DRAWER, DRAWER_DAG)
    assert s.node_correctness == 1.0
    assert "open(drawer)" not in s.achieved and "at(apple, drawer)" not in s.achieved
    assert s.task_completion == 0.5


def test_judge_initial_state_is_used() -> None:
    # if the scene shows the apple already held, pick_up is impossible and holding(apple) is no milestone
    s = score_plan(
        parse_plan("open(drawer), place(apple, drawer), close(drawer)"),
        parse_plan("open(drawer), place(apple, drawer), close(drawer)"),
        None,
        [parse_fact("holding(apple)"), parse_fact("closed(drawer)")],
    )
    assert s.milestones == ["open(drawer)", "at(apple, drawer)", "closed(drawer)"]
    assert s.task_completion == 1.0
    with pytest.raises(ValueError, match="cannot read fact"):
        parse_fact("drawer is closed")


def test_dual_arm_transfer() -> None:
    ref = parse_plan("left:pick_up(cup), right:no_ops\ntransfer(left, right, cup)\nright:place(cup, tray)")
    assert score_plan(ref, ref).task_completion == 1.0
    wrong_hand = parse_plan("left:pick_up(cup)\nleft:place(cup, tray)")
    s = score_plan(wrong_hand, ref)
    assert s.node_correctness == pytest.approx(1 / 3)


def test_node_correctness_is_one_to_one() -> None:
    ref = parse_plan("pick_up(cup), place(cup, tray), pick_up(cup), place(cup, shelf)")
    pred = parse_plan("pick_up(cup), pick_up(cup), pick_up(cup), place(cup, tray)")
    assert node_correctness(pred, ref) == 0.75  # the third pick_up has no reference node left
    with pytest.raises(ValueError, match="empty reference"):
        node_correctness(pred, [])


@pytest.mark.parametrize(
    ("pred", "gt", "score", "parts"),
    [
        ("place(apple, drawer)", "3-place(apple, drawer)", 100.0, (1, 1, 1)),
        ("Next: place(red_apple, drawer)", "place(apple, drawer)", 250 / 3, (1, 0.5, 1)),
        ("place(apple, top_drawer)", "place(apple, drawer)", 250 / 3, (1, 1, 0.5)),
        ("pick_up(apple)", "place(apple, drawer)", 100 / 3, (0, 1, 0)),  # wrong skill zeroes parameters
        ("place(pear, drawer)", "place(apple, drawer)", 100 / 3, (1, 0, 0)),
        ("I don't know", "place(apple, drawer)", 0.0, (0, 0, 0)),
    ],
)
def test_next_step(pred: str, gt: str, score: float, parts: tuple[float, float, float]) -> None:
    s, p = next_step_score(pred, gt)
    assert s == pytest.approx(score)
    assert (p["skill"], p["object"], p["parameters"]) == parts


def test_yes_no_and_choices() -> None:
    assert yes_no_correct("Yes, the drawer is open.", "yes")
    assert not yes_no_correct("It is not finished: no.", "yes")
    assert not yes_no_correct("unclear", "no")
    with pytest.raises(ValueError, match="yes/no"):
        yes_no_correct("yes", "maybe")
    assert choice_letters("The answer is (B)") == {"B"}
    assert choice_letters("B, C") == {"B", "C"}
    assert choice_correct("C", "C") and not choice_correct("C", "A,C")
    assert choice_correct("A and C", "A,C")
    with pytest.raises(ValueError, match="no option letter"):
        choice_correct("A", "the red one")

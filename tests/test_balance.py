"""Which worker keeps each binned partition (``engine.balance``): hand-checked moves."""

from distboost.engine.balance import balance


def test_five_and_three_partitions_become_four_and_four_with_one_move():
    owners = ["a"] * 5 + ["b"] * 3
    moved = balance(owners, [10] * 8, {"a": 1, "b": 1})
    assert moved == ["b"] + ["a"] * 4 + ["b"] * 3  # the first of a's equal partitions moves


def test_a_move_must_lower_the_slower_of_the_two():
    """a holds 100 + 10 + 10, b nothing: 100 moves (a 20, b 100); moving it back,
    or a 10 to b, would not lower the slower one, so it stops there."""
    assert balance(["a", "a", "a"], [100, 10, 10], {"a": 1, "b": 1}) == ["b", "a", "a"]
    assert balance(["a", "b"], [10, 9], {"a": 1, "b": 1}) == ["a", "b"]


def test_partitions_on_other_workers_stay():
    owners = ["a", "a", "a", "c"]
    assert balance(owners, [10] * 4, {"a": 1, "b": 1}) == ["b", "a", "a", "c"]


def test_rows_follow_the_workers_threads():
    owners = ["a"] * 6
    moved = balance(owners, [10] * 6, {"a": 2, "b": 1})
    assert moved.count("a") == 4 and moved.count("b") == 2

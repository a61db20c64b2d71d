import numpy as np
import pytest

from distboost.kernels.radix import sort_column, sort_columns


def test_a_tiny_column_sorts_without_its_nan_and_with_minus_zero_as_zero():
    values, order = sort_column(np.array([2.5, np.nan, -0.0, -3.0, 0.0, np.inf, -np.inf, 2.5]),
                                with_order=True)
    np.testing.assert_array_equal(values, [-np.inf, -3.0, 0.0, 0.0, 2.5, 2.5, np.inf])
    np.testing.assert_array_equal(order, [6, 3, 2, 4, 0, 7, 5])  # ties in their first order
    assert not np.signbit(values[2:4]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_columns_sort_as_numpy_sorts_them_and_their_order_finds_the_values(dtype):
    rng = np.random.default_rng(3)
    columns = (rng.normal(size=(6, 5000)) * 1e3).astype(dtype)
    columns[0, ::7] = np.nan
    columns[1] = np.round(columns[1] / 500)  # few distinct values, many ties
    columns[2, :100] = np.finfo(dtype).max
    columns[2, 100:200] = -np.finfo(dtype).tiny  # the smallest magnitudes, both signs
    columns[2, 200:300] = np.finfo(dtype).tiny
    columns[3] = np.nan  # every value missing
    columns[4] = 7.0  # every digit shared: no pass moves anything
    values, order, present = sort_columns(columns, with_order=True)
    for j in range(6):
        column = columns[j]
        expected = np.sort(column[~np.isnan(column)])
        assert present[j] == len(expected)
        np.testing.assert_array_equal(values[j, :present[j]], expected)
        np.testing.assert_array_equal(column[order[j, :present[j]]], expected)
        kept = values[j, :present[j]]
        assert (np.diff(order[j, :present[j]])[kept[1:] == kept[:-1]] > 0).all()  # stable
    assert values.dtype == dtype and present[3] == 0
    alone, none, counted = sort_columns(columns)  # only the keys move
    assert none.shape == (6, 0)
    np.testing.assert_array_equal(counted, present)
    for j in range(6):
        np.testing.assert_array_equal(alone[j, :present[j]], values[j, :present[j]])


def test_without_order_the_order_is_empty():
    values, order, present = sort_columns(np.array([[3.0, 1.0, 2.0]], np.float32))
    np.testing.assert_array_equal(values[0], [1.0, 2.0, 3.0])
    assert order.shape == (1, 0) and present[0] == 3


def test_integer_columns_sort_as_float64():
    values, _, present = sort_columns(np.array([[3, -1, 2], [0, 0, 1]], np.int64))
    assert values.dtype == np.float64 and list(present) == [3, 3]
    np.testing.assert_array_equal(values, [[-1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])

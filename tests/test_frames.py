"""inputs/frames.py: user frames into the float matrices the engine bins and predicts."""

import numpy as np
import pandas as pd
import pytest

from distboost.inputs.frames import infer_schema, to_matrix


def test_float32_frame_stays_float32_row_major():
    X = pd.DataFrame({"a": np.array([1.5, np.nan, -2.0], np.float32),
                      "b": np.array([0.25, 3.0, 7.0], np.float32)})
    out = to_matrix(X, infer_schema(X))
    assert out.dtype == np.float32 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, [[1.5, 0.25], [np.nan, 3.0], [-2.0, 7.0]])


def test_mixed_numpy_dtypes_become_float64_exactly():
    """Integers beyond float32's 24 bits, booleans and both float widths, in
    several pandas blocks: every value as float64 of the column's value."""
    X = pd.DataFrame({"i": np.array([16_777_217, -3, 0], np.int64),
                      "f": np.array([0.1, np.nan, 2.5], np.float32),
                      "b": np.array([True, False, True]),
                      "d": np.array([1e300, -0.0, 3.0])})
    out = to_matrix(X, infer_schema(X))
    assert out.dtype == np.float64 and out.flags.c_contiguous
    expected = np.array([[16_777_217, np.float32(0.1), 1, 1e300],
                         [-3, np.nan, 0, -0.0],
                         [0, 2.5, 1, 3.0]])
    np.testing.assert_array_equal(out, expected)


def test_columns_follow_the_schema_not_the_frame():
    X = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    schema = infer_schema(X)
    np.testing.assert_array_equal(to_matrix(X[["b", "a"]], schema), [[1.0, 3.0], [2.0, 4.0]])


def test_a_row_slice_of_a_frame():
    X = pd.DataFrame(np.arange(20, dtype=np.float32).reshape(10, 2), columns=["a", "b"])
    out = to_matrix(X.iloc[3:6], infer_schema(X))
    np.testing.assert_array_equal(out, [[6, 7], [8, 9], [10, 11]])


def test_pandas_missing_values_become_nan():
    X = pd.DataFrame({"n": pd.array([1, None, 3], dtype="Int64"),
                      "f": pd.array([0.5, 1.5, None], dtype="Float32")})
    out = to_matrix(X, infer_schema(X))
    np.testing.assert_array_equal(out, [[1, 0.5], [np.nan, 1.5], [3, np.nan]])


def test_categories_become_codes_beside_numbers():
    X = pd.DataFrame({"c": pd.Categorical(["x", "y", None]), "v": [1.0, 2.0, 3.0]})
    schema = infer_schema(X)
    schema.categories[0] = ["x", "y"]
    np.testing.assert_array_equal(to_matrix(X, schema), [[0, 1.0], [1, 2.0], [np.nan, 3.0]])


def test_a_text_column_is_refused_with_its_name_and_partition():
    schema = infer_schema(pd.DataFrame({"a": [1.0], "t": [2.0]}))
    with pytest.raises(TypeError, match=r"column 't' in partition 4 has dtype (object|str), which is neither numeric"):
        to_matrix(pd.DataFrame({"a": [1.0], "t": ["x"]}), schema, partition=4)

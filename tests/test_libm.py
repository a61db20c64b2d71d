"""libm: the C library's exp, log, log1p, expm1 and power as numba ufuncs,
made on first use."""

import math
import subprocess
import sys

import numpy as np
import pytest

from distboost.kernels import libm

X = np.array([-745.2, -20.5, -1e-9, 0.0, 3e-17, 0.5, 1.0, 2.0, 37.25, 709.7])


@pytest.mark.parametrize("name", ["exp", "log1p", "expm1"])
def test_each_value_is_the_c_librarys(name):
    x = X if name != "log1p" else np.abs(X)
    expected = np.array([getattr(math, name)(v) for v in x])
    np.testing.assert_array_equal(getattr(libm, name)(x), expected)


def test_log_and_power_are_the_c_librarys():
    x = np.array([1e-300, 0.25, 1.0, 2.0, 1e100])
    np.testing.assert_array_equal(libm.log(x), [math.log(v) for v in x])
    np.testing.assert_array_equal(libm.power(x, 1.5), [math.pow(v, 1.5) for v in x])
    assert libm.log(0.0) == -np.inf  # like numpy (with its warning), not math's error


def test_they_broadcast_like_numpys_ufuncs():
    out = libm.power(np.array([[1.0], [2.0]]), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(out, [[1.0, 1.0, 1.0], [2.0, 4.0, 8.0]])
    assert libm.exp.reduce is not None and isinstance(libm.exp(0.0), float)


def test_importing_the_module_makes_no_ufunc():
    """A Dask worker that computes none of them (binary log loss, say) does
    not wait for them when it imports distboost."""
    code = ("import distboost.kernels.libm as m; made = [n for n in m._UFUNCS if n in vars(m)]; "
            "m.log(1.0); print(made, sorted(n for n in m._UFUNCS if n in vars(m)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "['log']"]


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'sin'"):
        libm.sin  # noqa: B018
    libm.exp(0.0)
    names = dir(libm)
    assert {"exp", "log", "log1p", "expm1", "power"} <= set(names)
    assert len(names) == len(set(names))  # a made ufunc is listed once
